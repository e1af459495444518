"""`ascend-lens run` on pyACL-style scripts: exit codes, stdout, summary, flags."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "scripts"
REPO = Path(__file__).resolve().parents[2]


def run(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # Only the variables a test sets reach the run: no NPU_* or visibility from outside.
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "ASCEND_RT_"))}
    full_env = {**inherited, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=full_env,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("script", "stdout"),
    [
        ("rt_memory_round_trip.py", "memory ok\n"),
        ("rt_stream_event.py", "streams ok\n"),
        ("threads.py", "threads ok\n"),
        ("rt_callback.py", "callbacks ok\n"),
    ],
)
def test_pyacl_scripts_pass(script: str, stdout: str) -> None:
    r = run(SCRIPTS / script)
    assert r.returncode == 0, r.stderr
    assert r.stdout == stdout  # stdout is the script's alone
    assert "sanitizer: no findings" in r.stderr


def test_quickstart_example() -> None:
    r = run("--device", "910B", REPO / "examples" / "pyacl_quickstart.py")
    assert r.returncode == 0, r.stderr
    assert "MatMul matches numpy: True" in r.stdout
    assert "SoC: Ascend910B2" in r.stdout


def test_exit_code_and_findings_in_summary() -> None:
    r = run(SCRIPTS / "leaky.py")
    assert r.returncode == 7
    assert r.stdout == "double free -> 107000\n"
    assert "sanitizer: 2 finding(s)" in r.stderr
    assert "double-free" in r.stderr and "leak: 4096 bytes" in r.stderr
    assert "leaky.py:9" in r.stderr  # allocated at
    assert "peak memory" in r.stderr


def test_no_sanitize() -> None:
    r = run("--no-sanitize", SCRIPTS / "leaky.py")
    assert r.returncode == 7
    assert "sanitizer: off" in r.stderr


def test_inject_flag_and_env(tmp_path: Path) -> None:
    script = tmp_path / "inj.py"
    script.write_text(
        "import acl\nacl.init(); acl.rt.set_device(0)\n"
        "print([acl.rt.malloc(64, 0)[1] for _ in range(4)])\n"
    )
    r = run("--inject", "acl.rt.malloc:2:207001", "--inject", "acl.rt.free:1:107000", script)
    assert r.stdout == "[0, 207001, 0, 0]\n", r.stderr
    assert "injection malloc:2:207001: fired" in r.stderr
    assert "injection free:1:107000: never fired (0 matching call(s))" in r.stderr
    r = run(script, env={"NPU_INJECT": "aclrtMalloc:4:207001"})
    assert r.stdout == "[0, 0, 0, 207001]\n", r.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "acl.rt.malocc:1:207001",
            "unknown API 'acl.rt.malocc' (did you mean acl.rt.malloc?); known APIs: ",
        ),
        (
            "aclrtMalloc:1:207001, op:MatMull:2:507015",  # one bad rule refuses them all
            "unknown op type 'MatMull' (did you mean MatMul?); known op types: ",
        ),
        ("acl.rt.malloc", "bad injection spec 'acl.rt.malloc': expected API:N:CODE"),
    ],
)
def test_unknown_names_in_env_var_are_refused_before_the_script_runs(
    tmp_path: Path, value: str, message: str
) -> None:
    script = tmp_path / "inj.py"
    script.write_text("import acl\nprint('ran')\n")
    r = run("--no-summary", script, env={"NPU_INJECT": value})
    assert r.returncode == 2
    assert r.stdout == ""
    refused = [line for line in r.stderr.splitlines() if "NPU_INJECT" in line]
    assert len(refused) == 1, r.stderr
    assert refused[0].startswith("ascend-lens run: error: NPU_INJECT: " + message)
    assert "Traceback" not in r.stderr and "AclError" not in r.stderr
    assert "usage:" not in r.stderr  # not a command-line mistake


def test_env_var_read_outside_the_launcher_refuses_unknown_names(tmp_path: Path) -> None:
    """The runtime itself (a plain `python` with the shim) refuses the whole variable."""
    script = tmp_path / "plain.py"
    script.write_text(
        "import acl\nacl.init(); acl.rt.set_device(0)\n"
        "print([acl.rt.malloc(64, 0)[1] for _ in range(2)])\n"
    )
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("NPU_", "ASCEND_RT_"))}
    env = {
        **inherited,
        "NPU_INJECT": "aclrtMalloc:1:207001,aclrtMallok:2:207001",
        "PYTHONPATH": str(REPO / "npu_runtime" / "_shim"),
    }
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[0, 0]\n"  # no rule of the refused variable fired
    assert r.stderr.startswith(
        "ascend-lens: ignoring NPU_INJECT: unknown API 'aclrtMallok' "
        "(did you mean acl.rt.malloc?); known APIs: "
    )
    assert len(r.stderr.splitlines()) == 1


def test_devices_and_device_flags(tmp_path: Path) -> None:
    script = tmp_path / "count.py"
    script.write_text(
        "import acl\nacl.init()\nprint(acl.rt.get_device_count(), acl.get_soc_name())\n"
    )
    r = run("--devices", "2", "--device", "910B4", script)
    assert r.stdout == "(2, 0) Ascend910B4\n", r.stderr
    r = run(script, env={"NPU_DEVICES": "4", "NPU_DEVICE": "310P"})
    assert r.stdout == "(4, 0) Ascend310P3\n", r.stderr


def test_script_arguments_and_exception(tmp_path: Path) -> None:
    script = tmp_path / "args.py"
    script.write_text("import sys\nprint(sys.argv[1:])\nraise ValueError('boom')\n")
    r = run(script, "--devices", "x", "-v")
    assert r.returncode == 1
    assert r.stdout == "['--devices', 'x', '-v']\n"
    assert "ValueError: boom" in r.stderr
    assert "runpy" not in r.stderr and "launcher.py" not in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "H100", "x.py"], "unknown device 'H100'"),
        (["--devices", "0", "x.py"], "--devices: 0 is not a device count from 1 to 64"),
        (["--devices", "65", "x.py"], "--devices: 65 is not a device count from 1 to 64"),
        (["--inject", "malloc", "x.py"], "bad injection spec"),
        (["missing_script.py"], "script not found"),
    ],
)
def test_bad_options_are_clear(args: list[str], message: str) -> None:
    r = run(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_no_arguments_usage_names_script_required_and_args_optional() -> None:
    r = run()
    assert r.returncode == 2
    usage = " ".join(r.stderr.split())
    assert usage.endswith(
        "SCRIPT [ARGS ...] ascend-lens run: error: the following arguments are required: SCRIPT"
    )


def test_batch_bugs_example_names_the_failing_line_and_the_unsynchronised_read() -> None:
    example = REPO / "examples" / "pyacl_batch_bugs.py"
    r = run(example)
    assert r.returncode == 1  # the script's own check() exits on the failed copy
    # Read before the sync: each batch shows the previous one's bytes, as on the hardware.
    assert r.stdout.splitlines() == [
        f"batch {i}: first value {v}" for i, v in ((0, 0.0), (1, 0.0), (2, 1.0))
    ]
    assert "upload of batch 3 failed with 107000\n" in r.stderr
    assert "aclrtMemcpy failed, error code 107000 (ACL_ERROR_RT_PARAM_INVALID). " in r.stderr
    assert "count 76800 is outside (0, destMax=65536]" in r.stderr
    assert f"aclrtMemcpy called at {example}:42\n" in r.stderr
    assert r.stderr.count("read-before-sync: host 0x") == 3
    assert f"at {example}:46 in <module>\n    async work launched at {example}:44" in r.stderr


def test_acl_is_not_importable_outside_the_launcher() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "import acl"], capture_output=True, text=True, cwd="/"
    )
    assert r.returncode != 0 and "No module named 'acl'" in r.stderr


def test_mdl_missing_and_unsupported_model(tmp_path: Path) -> None:
    om = tmp_path / "resnet.om"
    om.write_bytes(b"\0" * 16)
    script = tmp_path / "mdl.py"
    script.write_text(
        "import acl\nacl.init(); acl.rt.set_device(0)\n"
        f"print(acl.mdl.load_from_file({str(tmp_path / 'nope.om')!r}))\n"
        f"print(acl.mdl.load_from_file({str(om)!r}))\n"
        "print(acl.get_recent_err_msg().splitlines()[0])\n"
    )
    r = run(script)
    lines = r.stdout.splitlines()
    assert lines[0] == "(0, 145002)"
    assert lines[1] == "(0, 200006)"
    assert "cannot execute" in lines[2]


def test_streams_example_overlaps_and_times() -> None:
    r = run("--no-summary", REPO / "examples" / "pyacl_streams_events.py")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "right after queuing, end event is not ready"
    assert lines[1].startswith("4 uploads of 8 MiB + compute: ") and lines[1].endswith("(ret 0)")
    assert r.stderr == ""  # --no-summary: nothing of ours on stderr


def test_sanitizer_example_reports_every_check() -> None:
    r = run(REPO / "examples" / "sanitizer_findings.py")
    assert r.returncode == 0
    assert r.stdout.splitlines() == [
        "copy 64 bytes into 40: 0",
        "read before sync: b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'",
        "use after free: 107000",
        "double free: 107000",
        "copy from a released bytes object: 0",
    ]
    for check in ("out-of-bounds", "read-before-sync", "use-after-free", "double-free", "leak"):
        assert f"ascend-lens sanitizer: {check}:" in r.stderr, check
    assert "allocated at " + str(REPO / "examples" / "sanitizer_findings.py") + ":18" in r.stderr
    assert "points into a bytes object Python has already released" in r.stderr


def test_injected_op_fault_surfaces_at_sync_in_a_pyacl_script() -> None:
    example = REPO / "examples" / "pyacl_add_op.py"
    ok = run("--no-summary", example)
    assert ok.returncode == 0 and ok.stdout == "Add matches numpy: True\n", ok.stderr
    r = run("--no-summary", "--inject", "op:Add:1:507015", example)
    assert r.returncode == 1
    assert "synchronize_stream failed: 507015" in r.stderr
    assert f"work launched at {example}:47" in r.stderr
    assert f"aclrtSynchronizeStream called at {example}:48" in r.stderr


def test_visible_devices_env(tmp_path: Path) -> None:
    script = tmp_path / "count.py"
    script.write_text("import acl\nacl.init()\nprint(acl.rt.get_device_count())\n")
    r = run(script, env={"ASCEND_RT_VISIBLE_DEVICES": "2,3,5"})
    assert r.stdout == "(3, 0)\n", r.stderr


def test_acl_layout_under_the_launcher(tmp_path: Path) -> None:
    script = tmp_path / "layout.py"
    script.write_text(
        "import acl, acl.rt, acl.util\n"
        "import npu_runtime.acl\n"
        "print(acl is npu_runtime.acl, [hasattr(acl, m) for m in ('rt', 'util', 'mdl', 'media', 'op', 'prof')])\n"
    )
    r = run("--no-summary", script)
    assert r.stdout == "True [True, True, True, True, True, True]\n", r.stderr


def test_official_sample_patterns() -> None:
    r = run(SCRIPTS / "rt_sample_patterns.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "sample patterns ok\n"
    assert "sanitizer: 1 finding(s)" in r.stderr
    assert "kind-mismatch: kind MEMCPY_DEVICE_TO_HOST does not match" in r.stderr
