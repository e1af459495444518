"""`ascend-lens run --dump DIR [--dump-level L] [--numerics M]` as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from .pt_reader import load_pt

# A pyACL-era script would need descs and buffers; the Tensor API reaches the same dispatch.
SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import npu_runtime
    from npu_runtime import Tensor
    x = Tensor(np.full((4, 4), 300.0), dtype="float16")
    y = x * x
    print("max", float(y.numpy().max()))
    """
)

PYACL = textwrap.dedent(
    """\
    import numpy as np
    import acl
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    a = np.arange(6, dtype=np.float16)
    dev, _ = acl.rt.malloc(a.nbytes, 0)
    out, _ = acl.rt.malloc(a.nbytes, 0)
    acl.rt.memcpy(dev, a.nbytes, acl.util.numpy_to_ptr(a), a.nbytes, 1)
    desc = acl.create_tensor_desc(1, [6], 2)
    ins = [acl.create_data_buffer(dev, a.nbytes)] * 2
    outs = [acl.create_data_buffer(out, a.nbytes)]
    attr = acl.op.create_attr()
    assert acl.op.execute_v2("Add", [desc, desc], ins, [desc], outs, attr, stream) == 0
    acl.rt.synchronize_stream(stream)
    acl.rt.reset_device(0)
    acl.finalize()
    """
)


def _run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "script.py"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPU_")} | {"PYTHONPATH": ""}
    return subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", *args, str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _entry(root: Path, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((root / "step0/rank0/dump.json").read_text())["data"][name]
    return entry


def test_dump_in_npu_numerics_keeps_float16_and_its_overflow(tmp_path: Path) -> None:
    res = _run(tmp_path, SCRIPT, "--dump", "d")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "max inf\n"
    assert f"dump written to {tmp_path / 'd'}" in res.stderr
    out = _entry(tmp_path / "d", "Torch.mul.0.forward")["output"][0]
    assert (out["dtype"], out["Max"]) == ("torch.float16", float("inf"))


def test_float32_reference_run_of_the_same_script_does_not_overflow(tmp_path: Path) -> None:
    res = _run(tmp_path, SCRIPT, "--dump", "d", "--numerics", "float32", "--dump-level", "tensor")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "max 90000.0\n"
    out = _entry(tmp_path / "d", "Torch.mul.0.forward")["output"][0]
    # Described as the program declared it (msprobe fails every row whose dtypes differ),
    # holding the float32 value.
    assert (out["dtype"], out["Max"]) == ("torch.float16", 90000.0)
    storage, values = load_pt(tmp_path / "d/step0/rank0/dump_tensor_data" / out["data_name"])
    assert storage == "FloatStorage" and values.max() == 90000.0


def test_pyacl_ops_are_dumped_too(tmp_path: Path) -> None:
    res = _run(tmp_path, PYACL, "--dump", "d")
    assert res.returncode == 0, res.stderr
    out = _entry(tmp_path / "d", "Torch.add.0.forward")["output"][0]
    assert (out["shape"], out["Max"], out["Min"]) == ([6], 10.0, 0.0)


def test_a_run_without_ops_says_the_dump_is_empty(tmp_path: Path) -> None:
    res = _run(tmp_path, "print('no ops')\n", "--dump", "d")
    assert res.returncode == 0, res.stderr
    assert f"dump empty (no op ran): nothing written to {tmp_path / 'd'}" in res.stderr
    assert not (tmp_path / "d").exists()


def test_usage_errors_exit_2_before_the_script_runs(tmp_path: Path) -> None:
    res = _run(tmp_path, SCRIPT, "--dump-level", "tensor")
    assert res.returncode == 2 and "--dump-level needs --dump DIR" in res.stderr
    (tmp_path / "f").write_text("")
    res = _run(tmp_path, SCRIPT, "--dump", "f")
    assert res.returncode == 2 and "--dump f: exists and is not a directory" in res.stderr
    res = _run(tmp_path, SCRIPT, "--numerics", "float8")
    assert res.returncode == 2 and "invalid choice: 'float8'" in res.stderr
    assert res.stdout == ""
