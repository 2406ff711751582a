"""Kernels that take a struct ("state bundle") by value: the fields are read
from the CUDA source, host code passes a dict of them by name, every field is
held to the rules of a direct argument, and the layout both back ends pack is
the one the C++ compiler gives the struct."""

from pathlib import Path

import numpy as np
import pytest

from nx_gpumatch.gpu._emulate import EmuModule
from nx_gpumatch.gpu._launch import get_module
from nx_gpumatch.gpu._source import (
    check_args,
    kernel_files,
    kernel_source,
    pack_struct,
    parse_kernels,
)

SELFTEST = Path(__file__).parent / "kernels" / "emu_selftest.cu"
# kernels/*.cu whose kernels take a struct
BUNDLED = [
    p.stem
    for p in kernel_files()
    if any(q.is_struct for ps in parse_kernels(p.read_text()).values() for q in ps)
]


@pytest.fixture(scope="module")
def selftest():
    return EmuModule("emu_selftest", source=SELFTEST.read_text())


def _mixed(**kw):
    """The fields of the selftest's Mixed, by name (``in`` is a keyword in
    Python, hence the literal)."""
    m = {
        "scale": np.int32(3),
        "in": np.arange(10, dtype=np.int64),
        "negate": True,
        "n": np.int64(10),
        "out": np.zeros(10, np.uint64),
        "bias": np.float32(2.0),
    }
    m.update(kw)
    return m


def test_fields_are_read_from_the_source():
    params = parse_kernels(SELFTEST.read_text())["mixed_bundle"]
    m = params[0]
    assert m.is_struct and m.ctype == "Mixed" and m.name == "m"
    assert [(f.name, f.code) for f in m.fields] == [
        ("scale", "i4"),
        ("in", "pi8"),
        ("negate", "b1"),
        ("n", "i8"),
        ("out", "pu8"),
        ("bias", "f4"),
    ]
    # C's layout: padding after scale and negate, the size a multiple of 8
    assert [m.dtype.fields[f.name][1] for f in m.fields] == [0, 8, 16, 24, 32, 40]
    assert m.dtype.itemsize == 48 and m.code == "s48"


def test_a_struct_argument_runs(selftest):
    k = selftest.get_function("mixed_bundle")
    m = _mixed()
    written = np.zeros(1, np.uint64)
    k((2,), (32,), (m, written))
    want = (-3 * np.arange(10) + 2).astype(np.int64).view(np.uint64)
    np.testing.assert_array_equal(m["out"], want)
    assert written[0] == 10


@pytest.mark.parametrize(
    "field,value,message",
    [
        (
            "in",
            np.arange(10, dtype=np.int32),
            r"field m\.in \(const long long \* in\): array dtype int32",
        ),
        ("out", np.zeros(20, np.uint64)[::2], r"field m\.out .*C-contiguous"),
        ("scale", np.int64(3), r"field m\.scale \(int scale\): got a numpy int64"),
        ("scale", 3, r"field m\.scale .*Python int is passed as 64 bits"),
        ("bias", 2.0, r"field m\.bias .*Python float is passed as a double"),
        ("in", [1, 2], r"field m\.in .*expected a device array .*, got builtins.list"),
    ],
)
def test_a_wrong_field_is_refused_by_name(selftest, field, value, message):
    k = selftest.get_function("mixed_bundle")
    with pytest.raises(TypeError, match=r"kernel mixed_bundle, argument 0 \(Mixed m\), " + message):
        k((1,), (32,), (_mixed(**{field: value}), np.zeros(1, np.uint64)))


def test_missing_unknown_and_positional_fields_are_refused(selftest):
    k = selftest.get_function("mixed_bundle")
    written = np.zeros(1, np.uint64)
    m = _mixed()
    del m["bias"]
    with pytest.raises(TypeError, match="missing bias"):
        k((1,), (32,), (m, written))
    with pytest.raises(TypeError, match="unknown extra"):
        k((1,), (32,), (_mixed(extra=np.int32(1)), written))
    with pytest.raises(TypeError, match="mapping of its fields by name, got tuple"):
        k((1,), (32,), (tuple(_mixed().values()), written))


def test_a_wrong_field_of_a_project_kernel_is_refused_by_name():
    """refine_communities' Refined bundle with an int64 ``ref``: refused
    before launch, naming the field, as a direct argument would be."""
    params = parse_kernels(kernel_source("leiden"))["refine_communities"]
    names = {p.name: p for p in params}
    n = 4
    lv = dict(
        indptr=np.zeros(n + 1, np.int64),
        indices=np.zeros(0, np.int32),
        w=np.zeros(0),
        k=np.ones(n),
        res_over_m2=np.float64(1.0),
    )
    cs = dict(cptr=np.zeros(2, np.int64), members=np.arange(n, dtype=np.int32))
    cs.update(comm=np.zeros(n, np.int32), a=np.ones(1))
    rf = {
        f.name: np.zeros(n, np.int32 if f.code == "pi4" else np.float64) for f in names["rf"].fields
    }
    args = (np.int32(0), np.zeros(0, np.int32), np.int32(1), lv, cs, rf)
    args += (np.float64(0.01), np.uint64(0), np.int64(0))
    check_args("refine_communities", params, args, np)  # the right types pass
    bad = dict(rf, ref=np.zeros(n, np.int64))
    with pytest.raises(TypeError, match=r"field rf\.ref \(int \* ref\): array dtype int64"):
        check_args("refine_communities", params, args[:5] + (bad,) + args[6:], np)


def test_pack_struct_puts_each_field_at_its_offset():
    m = parse_kernels(SELFTEST.read_text())["mixed_bundle"][0]
    values = _mixed(scale=np.int32(-5), out=None)
    rec = pack_struct(m, values, lambda f, a: 0x1000 if f.name == "in" else 0x2000)
    raw = rec.tobytes()
    assert len(raw) == 48
    assert int.from_bytes(raw[0:4], "little", signed=True) == -5
    assert int.from_bytes(raw[8:16], "little") == 0x1000
    assert raw[16] == 1
    assert int.from_bytes(raw[24:32], "little") == 10
    assert int.from_bytes(raw[32:40], "little") == 0  # None: a null pointer
    assert np.frombuffer(raw[40:44], np.float32)[0] == 2.0


def test_selftest_struct_layout_equals_the_compilers(selftest):
    m = parse_kernels(SELFTEST.read_text())["mixed_bundle"][0]
    size, offsets = selftest.struct_layout("Mixed")
    assert size == m.dtype.itemsize
    assert offsets == [m.dtype.fields[f.name][1] for f in m.fields]


@pytest.mark.parametrize("problem", BUNDLED)
def test_every_kernel_struct_layout_equals_the_compilers(problem):
    """sizeof and every offsetof, as g++ compiles the file, equal the
    packed layout (nvcc lays these structs out as the host compiler does)."""
    mod = get_module(problem, "emulate")
    structs = {p.ctype: p for ps in mod.kernels.values() for p in ps if p.is_struct}
    assert structs
    for name, p in structs.items():
        size, offsets = mod.struct_layout(name)
        assert size == p.dtype.itemsize, name
        assert offsets == [p.dtype.fields[f.name][1] for f in p.fields], name


def test_kernels_take_at_most_ten_parameters():
    long = {
        (path.name, name): len(params)
        for path in kernel_files()
        for name, params in parse_kernels(path.read_text()).items()
        if len(params) > 10
    }
    assert not long, f"kernels with more than 10 parameters (bundle them): {long}"


def test_cupy_back_end_passes_a_struct_as_one_record(monkeypatch):
    """Without a GPU: CuPy's array type stood in for by a stub with a
    device address, the launcher hands RawKernel a NumPy array of one record
    (passed by value) holding the addresses and scalars at their offsets."""
    cupy = pytest.importorskip("cupy")
    from nx_gpumatch.gpu._launch import _CupyKernel

    class DeviceArray:
        def __init__(self, dtype, ptr):
            self.dtype = np.dtype(dtype)
            self.flags = np.zeros(1).flags  # C-contiguous
            self.data = type("Pointer", (), {"ptr": ptr})()

    monkeypatch.setattr(cupy, "ndarray", DeviceArray)
    calls = []
    params = parse_kernels(SELFTEST.read_text())["mixed_bundle"]
    kernel = _CupyKernel("mixed_bundle", params, lambda *a, **kw: calls.append(a))
    m = _mixed(**{"in": DeviceArray(np.int64, 0x7000), "out": DeviceArray(np.uint64, 0x9000)})
    written = DeviceArray(np.uint64, 0xA000)
    kernel((1,), (32,), (m, written))
    ((grid, block, args),) = calls
    rec, direct = args
    assert direct is written  # a direct argument goes through as it was
    assert isinstance(rec, np.ndarray) and rec.shape == (1,) and rec.dtype == params[0].dtype
    assert rec["in"][0] == 0x7000 and rec["out"][0] == 0x9000 and rec["scale"][0] == 3
    assert rec["negate"][0] and rec["n"][0] == 10 and rec["bias"][0] == 2.0
    with pytest.raises(TypeError, match=r"field m\.out .*dtype int32"):
        kernel((1,), (32,), (dict(m, out=DeviceArray(np.int32, 0x9000)), written))
