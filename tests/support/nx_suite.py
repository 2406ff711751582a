"""Run networkx's own tests against the gpumatch backend in networkx's test mode.

Test mode is set up when networkx is imported, so each run is a subprocess. A
small plugin counts the calls of the watched functions that reach the backend,
records networkx's log lines about a watched function falling back, and lists
xfails, failures and passes; the calling test decides what is allowed.
"""

import json
import os
import subprocess
import sys
import time

RUNNER = r"""
import json, logging, os, sys
import pytest

WATCHED = tuple(os.environ["NX_SUITE_WATCHED"].split(","))
state = {"calls": {n: 0 for n in WATCHED}, "fallbacks": [], "xfailed": [], "failed": [],
         "passed": 0, "skipped": 0}
FALLBACK_WORDS = ("can't run", "alling back", "not implemented")


class _Log(logging.Handler):
    def emit(self, record):
        msg = record.getMessage()
        named = any(f"'{n}'" in msg or f"`{n}`" in msg for n in WATCHED)
        if named and any(w in msg for w in FALLBACK_WORDS):
            state["fallbacks"].append(msg[:400])


class Plugin:
    def pytest_configure(self, config):
        from nx_gpumatch import interface

        for name in WATCHED:
            func = getattr(interface.BackendInterface, name)

            def counted(*args, __f=func, __n=name, **kwargs):
                state["calls"][__n] += 1
                return __f(*args, **kwargs)

            setattr(interface.BackendInterface, name, staticmethod(counted))
        log = logging.getLogger("networkx")
        log.setLevel(logging.DEBUG)
        log.addHandler(_Log())

    def pytest_runtest_logreport(self, report):
        if report.skipped and not getattr(report, "wasxfail", ""):
            state["skipped"] += 1
            return
        if report.when != "call" and not report.failed:
            return
        reason = getattr(report, "wasxfail", "")
        if reason:
            state["xfailed"].append([report.nodeid.split("::")[-1], reason, report.outcome])
        elif report.failed:
            state["failed"].append(report.nodeid)
        elif report.passed:
            state["passed"] += 1


code = pytest.main(sys.argv[1:], plugins=[Plugin()])
print("SUITE-RESULT " + json.dumps({"code": int(code), **state}))
"""


def run_networkx_suite(
    modules, watched, *, fallback, keyword=None, timeout=900, extra=(), shards=1
):
    """(result dict, stdout) of networkx's tests in ``modules`` run on the backend.

    ``shards`` > 1 (the whole package only): its test files are cut into that
    many groups of about equal size, run side by side in processes of their
    own, and the results summed (the suite is mostly one busy thread)."""
    env = dict(os.environ)
    env["NETWORKX_TEST_BACKEND"] = "gpumatch"
    # networkx reads this with bool(str): only the empty string means "off"
    env["NETWORKX_FALLBACK_TO_NX"] = "True" if fallback else ""
    env["NX_SUITE_WATCHED"] = ",".join(watched)
    args = [sys.executable, "-c", RUNNER, "-q", "-p", "no:cacheprovider", "-rfxX"]
    if keyword:
        args += ["-k", keyword]
    args += list(extra)
    if shards > 1:
        assert list(modules) == ["networkx"], modules
        groups = [[str(f) for f in g] for g in _test_file_groups(shards)]
    else:
        groups = [["--pyargs", *modules]]
    procs = [
        subprocess.Popen(
            args + g, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for g in groups
    ]
    deadline = time.monotonic() + timeout  # one limit for the run, not one per group
    try:
        outs = [p.communicate(timeout=max(1.0, deadline - time.monotonic())) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    results = []
    for stdout, stderr in outs:
        lines = [ln for ln in stdout.splitlines() if ln.startswith("SUITE-RESULT ")]
        assert lines, stdout[-3000:] + stderr[-3000:]
        results.append(json.loads(lines[-1][len("SUITE-RESULT ") :]))
    return _merge(results), "\n".join(out for out, _ in outs)


def _test_file_groups(k):
    """networkx's test files in k groups of about equal bytes (largest first,
    each to the lightest group)."""
    import pathlib

    import networkx

    root = pathlib.Path(networkx.__file__).parent
    files = sorted({*root.rglob("test_*.py"), *root.rglob("*_test.py")})
    groups, sizes = [[] for _ in range(k)], [0] * k
    for f in sorted(files, key=lambda f: -f.stat().st_size):
        i = sizes.index(min(sizes))
        groups[i].append(f)
        sizes[i] += f.stat().st_size
    return [sorted(g) for g in groups]


def _merge(results):
    """One result dict from the runs of several groups of test files."""
    out = {
        "code": max(r["code"] for r in results),
        "calls": {n: sum(r["calls"][n] for r in results) for n in results[0]["calls"]},
    }
    for key in ("fallbacks", "xfailed", "failed"):
        out[key] = [x for r in results for x in r[key]]
    for key in ("passed", "skipped"):
        out[key] = sum(r[key] for r in results)
    return out


def summary(res, title):
    """The counts of a run as lines for the test output: passed, failed, skipped,
    calls that reached the backend, calls that fell back to networkx (by
    function), and each xfail with its reason."""
    import collections

    fell = collections.Counter()
    for msg in res["fallbacks"]:
        name = next((n for n in res["calls"] if f"`{n}`" in msg or f"'{n}'" in msg), "?")
        fell[name] += 1
    reasons = collections.Counter((reason, outcome) for _, reason, outcome in res["xfailed"])
    lines = [
        f"{title}: {res['passed']} passed, {len(res['failed'])} failed, {res['skipped']} skipped, "
        f"{len(res['xfailed'])} xfailed/xpassed",
        "  calls run by gpumatch: "
        + ", ".join(f"{n} {c}" for n, c in sorted(res["calls"].items())),
        "  calls that fell back to networkx: "
        + (", ".join(f"{n} {c}" for n, c in sorted(fell.items())) or "none"),
    ]
    for (reason, outcome), count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        # pytest reports an xfail as outcome "skipped" and an xpass as "passed"
        label = "xfailed" if outcome == "skipped" else "xpassed"
        lines.append(f"  {count} x {label}: {reason[:200]}")
    return "\n".join(lines)
