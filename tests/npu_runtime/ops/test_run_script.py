"""A pyACL script under `ascend-lens run`, as users run it: ops, check mode, profile output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """\
import acl
import numpy as np

acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
x = np.full((4, 4), 60000, np.float16)
size = x.nbytes
bufs, ptrs = [], []
for host in (x, None):
    ptr, _ = acl.rt.malloc(size, 0)
    if host is not None:
        data = host.tobytes()
        acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), size, 1)
    ptrs.append(ptr)
    bufs.append(acl.create_data_buffer(ptr, size))
desc = acl.create_tensor_desc(1, [4, 4], 2)
ret = acl.op.execute_v2("Add", [desc, desc], [bufs[0], bufs[0]], [desc], [bufs[1]], 0, stream)
print("execute", ret)
print("sync", acl.rt.synchronize_stream(stream))
out = bytes(size)
acl.rt.memcpy(acl.util.bytes_to_ptr(out), size, ptrs[1], size, 2)
print("inf", bool(np.isinf(np.frombuffer(out, np.float16)).all()))
"""
LAUNCH_LINE = next(i for i, t in enumerate(SCRIPT.splitlines(), 1) if "execute_v2" in t)


def run(tmp_path: Path, *args: str, check_numerics: bool) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "overflow.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "NPU_CHECK_NUMERICS"}
    if check_numerics:
        env["NPU_CHECK_NUMERICS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", *args, str(script)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_fp16_overflow_is_silent_by_default(tmp_path: Path) -> None:
    proc = run(tmp_path, check_numerics=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["execute 0", "sync 0", "inf True"]


def test_check_mode_reports_the_overflowing_op_at_sync(tmp_path: Path) -> None:
    proc = run(tmp_path, check_numerics=True)
    assert proc.returncode == 0, proc.stderr
    # The op is accepted; the finding surfaces at the synchronisation, as a device fault.
    assert proc.stdout.splitlines()[:2] == ["execute 0", "sync 207016"]


def test_profile_records_the_op(tmp_path: Path) -> None:
    out = tmp_path / "prof"
    proc = run(tmp_path, "--profile", str(out), check_numerics=False)
    assert proc.returncode == 0, proc.stderr
    (csv,) = out.glob("op_summary_*.csv")
    rows = [r for r in csv.read_text().splitlines() if ",Add," in r or r.startswith("Add")]
    assert rows and "AI_VECTOR_CORE" in rows[0]
    doc = json.loads((out / "lines.json").read_text())
    (entry,) = [e for e in doc["lines"] if e["line"] == LAUNCH_LINE]
    assert entry["file"] == str(tmp_path / "overflow.py")
    assert [(o["op_type"], o["bound"]) for o in entry["top_ops"]] == [("Add", "launch")]
