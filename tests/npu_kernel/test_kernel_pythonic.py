"""The kernel with the Pythonic layer (npu_runtime.Tensor) and with non-default devices."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.npu_kernel.conftest import execute, of_type, run_cli, stdout

PROFILE_MIME = "application/vnd.ascend-lens.profile+json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_tensor_cell_profile_and_shape_error(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "%npu_reset\nimport numpy as np\nfrom npu_runtime import Tensor")
    reply, msgs = execute(
        kc,
        "%%npu_profile\n"
        "a = Tensor(np.ones((512, 512), np.float16))\n"
        "b = a @ a\n"
        "c = (b + b).sum()\n"
        "print(float(b.numpy()[0, 0]), float(c.numpy()))\n",
    )
    assert reply["status"] == "ok", msgs
    assert stdout(msgs) == "512.0 inf\n"  # fp16 sum of 2*512**3 overflows, as on the NPU
    (doc,) = [d["data"][PROFILE_MIME] for d in of_type(msgs, "display_data")]
    by_line = {e["line"]: e for e in doc["lines"]}
    assert by_line[3]["top_ops"][0]["op_type"] == "MatMul"
    assert by_line[3]["op_count"] == 1  # one MatMul; its bound is the cost model's business
    assert {"Add", "ReduceSum"} <= {o["op_type"] for o in by_line[4]["top_ops"]}
    assert 2 in by_line  # the host-to-device copy of line 2

    reply, msgs = execute(kc, "x = Tensor(np.ones((4, 8), np.float16))\ny = x @ x\n")
    assert reply["ename"] == "AclError"
    text = ANSI.sub("", "\n".join(of_type(msgs, "error")[0]["traceback"]))
    assert "ACL error 100021 ACL_ERROR_OP_INPUT_NOT_MATCH in MatMul" in text
    assert "MatMul inner dimensions differ" in text
    assert f"at: Cell In[{reply['execution_count']}], line 2" in text
    assert "tensor.py" not in text and "npu_runtime/ops" not in text


def test_kernelspec_device_options_reach_the_runtime(kernel_prefix: Path, tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "JUPYTER_PATH": str(tmp_path / "share" / "jupyter")}
    proc = run_cli(
        "install", "--prefix", str(tmp_path), "--device", "910B4", "--devices", "2", env=env
    )
    assert proc.returncode == 0, proc.stderr
    spec = tmp_path / "share" / "jupyter" / "kernels" / "ascend-npu" / "kernel.json"
    assert json.loads(spec.read_text())["argv"][-4:] == ["--device", "910B4", "--devices", "2"]
    saved = os.environ["JUPYTER_PATH"]
    os.environ["JUPYTER_PATH"] = env["JUPYTER_PATH"]
    try:
        km, kc = start_new_kernel(kernel_name="ascend-npu", startup_timeout=60)
    finally:
        os.environ["JUPYTER_PATH"] = saved
    try:
        _, msgs = execute(
            kc, "import acl\nacl.init()\nprint(acl.get_soc_name(), acl.rt.get_device_count())"
        )
        assert stdout(msgs) == "Ascend910B4 (2, 0)\n"
        _, msgs = execute(kc, "%npu_device")
        assert stdout(msgs) == "Emulating 910B4 x2.\n"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
