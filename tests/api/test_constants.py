"""Each shared constant has one definition: the engines and layers import it
from there, and the CUDA kernels' copy agrees with it."""

import ast
import re

from nx_gpumatch import _constants
from tests import support

ROOT = support.ROOT

# name -> the one module that assigns it
HOMES = {
    "NO_RANK": "nx_gpumatch/_constants.py",
    "UNSEEN": "nx_gpumatch/_constants.py",
    "ENDPOINT": "nx_gpumatch/_constants.py",
    "P_BLUE": "nx_gpumatch/_constants.py",
    "B_MAX": "nx_gpumatch/_constants.py",
    # launch limits and empty Suitor words of every GPU family
    "MAX_GRID": "nx_gpumatch/gpu/_launch.py",
    "EMPTY_WORD": "nx_gpumatch/gpu/_launch.py",
    # serial/parallel build threshold of every Kernel
    "PARALLEL_MIN": "nx_gpumatch/cpu/__init__.py",
    # b-Suitor queues and loops (CPU and distributed engines)
    "QUEUE_PARALLEL_MIN": "nx_gpumatch/cpu/b_matching.py",
}


def _assigned_names(path):
    """Names assigned at a module's top level."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_each_shared_constant_is_defined_once():
    homes = {name: [] for name in HOMES}
    for path in sorted((ROOT / "nx_gpumatch").rglob("*.py")):
        for name in _assigned_names(path) & set(HOMES):
            homes[name].append(path.relative_to(ROOT).as_posix())
    assert homes == {name: [home] for name, home in HOMES.items()}


def test_cuda_no_rank_is_the_python_one():
    common = (ROOT / "kernels" / "common.cuh").read_text()
    (value,) = re.findall(r"#define\s+NO_RANK\s+(\S+)", common)
    assert int(value, 0) == _constants.NO_RANK
