"""The runtime misuse table, through `ascend-lens run`: codes, findings, never a signal."""

from __future__ import annotations

import json

import pytest
from bad_input_support import HERE, run

SCRIPTS = HERE / "scripts"
PARAM_INVALID, INVALID_PARAM, DEVICE_ID, HOST_ALLOC = 107000, 100000, 107001, 207001

EXPECTED = {
    "h2d from a reversed view": PARAM_INVALID,
    "d2h into a reversed view": PARAM_INVALID,
    "h2d from a broadcast view": PARAM_INVALID,
    "d2h into a read-only memmap": PARAM_INVALID,
    "d2h into a read-only array": PARAM_INVALID,
    "memset of a read-only memmap": PARAM_INVALID,
    "h2d from a read-only memmap": 0,
    "h2d from a strided view": 0,
    "ptr_to_numpy over a read-only memmap": "read-only",
    "memcpy2d width 0": INVALID_PARAM,
    "memcpy2d height 0": INVALID_PARAM,
    "memcpy2d dst == src, height -1": INVALID_PARAM,  # kind 3: only H2D/D2H are 2-D kinds
    "memcpy2d height -1": PARAM_INVALID,
    "memcpy2d height 2**40": PARAM_INVALID,
    "memcpy2d width > pitch": INVALID_PARAM,
    "memcpy2d device to device": INVALID_PARAM,
    "memcpy2d NULL dst": INVALID_PARAM,
    "memcpy2d rows": "rows copied",
    "malloc_host(2**40)": HOST_ALLOC,
    "malloc_host(-1)": HOST_ALLOC,
    "malloc_host(0)": INVALID_PARAM,
    "memcpy count > destMax": PARAM_INVALID,
    "memcpy from an unknown host pointer": PARAM_INVALID,
    "memcpy past a device allocation": PARAM_INVALID,
    "free twice": PARAM_INVALID,
    "free NULL": INVALID_PARAM,
    "set_device past the count": DEVICE_ID,
}


def test_misuse_table_returns_codes_and_findings_never_a_signal() -> None:
    r = run("run", str(SCRIPTS / "misuse_table.py"), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == EXPECTED
    # A copy past a view's real memory is a sanitizer finding with the line that made it.
    assert "out-of-bounds: src range" in r.stderr
    assert "bytes past the 1-byte host buffer" in r.stderr  # the broadcast view's one byte
    assert "Traceback" not in r.stderr


def test_zero_fill_of_a_40_gb_buffer_stays_unbacked() -> None:
    r = run("run", "--no-summary", str(SCRIPTS / "zero_fill.py"), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    assert lines["zeros"] == "0 edges [0, 0, 5, 5, 0, 0, 0, 0]"
    assert int(lines["maxrss_mb"]) < 1024  # 40 GB written would be 40,960


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--devices", "65"], "--devices: 65 is not a device count from 1 to 64 (CANN's limit"),
        (["--devices", "0"], "--devices: 0 is not a device count from 1 to 64"),
        (
            ["--inject", "acl.rt.malocc:1:207001"],
            "--inject: unknown API 'acl.rt.malocc' (did you mean acl.rt.malloc?); known APIs: ",
        ),
        (
            ["--inject", "op:MatMull:1:507015"],
            "--inject: unknown op type 'MatMull' (did you mean MatMul?); known op types: ",
        ),
    ],
)
def test_bad_run_options_are_refused_up_front(args: list[str], message: str) -> None:
    r = run("run", *args, str(SCRIPTS / "zero_fill.py"))
    assert r.returncode == 2
    assert message in r.stderr
    assert r.stdout == ""  # refused before the script ran


def test_known_names_are_listed_and_accepted() -> None:
    r = run("run", "--inject", "nope:1:1", str(SCRIPTS / "zero_fill.py"))
    listed = r.stderr.split("known APIs: ", 1)[1]
    for name in ("acl.rt.malloc", "acl.rt.memcpy_async", "acl.init", "acl.mdl.execute"):
        assert name in listed
    ok = run(
        "run", "--no-summary", "--inject", "aclrtMemset:1:507000", str(SCRIPTS / "zero_fill.py")
    )
    assert ok.returncode == 1 and "AssertionError" in ok.stderr  # the rule fired: memset failed
