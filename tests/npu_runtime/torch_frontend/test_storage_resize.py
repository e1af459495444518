"""`untyped_storage().resize_()` on npu (what FSDP does to parameter storage), under
`ascend-lens run`: the C++ hooks re-point the storage at a new caching-allocator block."""

from __future__ import annotations

import json
from pathlib import Path

from torch_support import SCRIPTS, run

SCRIPT = SCRIPTS / "storage_resize.py"


def _line_of(text: str) -> int:
    lines = SCRIPT.read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if text in ln)


def test_grow_shrink_to_zero_regrow_keep_values_and_free_blocks(tmp_path: Path) -> None:
    r = run("--no-summary", "--profile", tmp_path / "prof", SCRIPT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:5] == [
        # 32 bytes grown to 4096: the 8 floats kept; a 4 KB block replaces the 512-byte one
        "grow 4096 npu:1 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] 3584",
        # size 0: no block at all (data pointer 0), both blocks back to the allocator
        "shrink 0 0 -512",
        "regrow 16 [1.5, 2.5, 3.5, 4.5]",
        "shrink_keep 8 [1.5, 2.5]",
        # a failed resize raises torch.OutOfMemoryError and leaves the storage as it was
        "oom 8 NPU out of memory. Tried to allocate more than 1EB memory.",
    ]
    profile = json.loads((tmp_path / "prof" / "lines.json").read_text())
    d2d = {
        ln["line"]
        for ln in profile["lines"]
        if any(op["op_type"] == "MemcpyD2D" for op in ln["top_ops"])
    }
    # the kept bytes are a device-to-device copy at the resize line; from or to 0, none
    assert d2d == {_line_of("s.resize_(4096)"), _line_of("s.resize_(8)")}


def test_without_a_compiler_resize_raises_pytorchs_not_implemented_error(tmp_path: Path) -> None:
    script = tmp_path / "r.py"
    script.write_text(
        "import torch, torch_npu\n"
        "s = torch.ones(4, device='npu').untyped_storage()\n"
        "s.resize_(64)\n"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "CXX": str(tmp_path / "no-such-c++")}
    r = run("--no-summary", script, env=env)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: ") and "resizePrivateUse1Bytes" in last
