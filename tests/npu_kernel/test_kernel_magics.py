"""%%npu_profile, %npu, %npu_mem, %npu_reset and %npu_device through a real kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.npu_kernel.conftest import execute, of_type, stdout

PROFILE_MIME = "application/vnd.ascend-lens.profile+json"

SETUP = (
    "from npu_runtime.core.runtime import get_runtime\n"
    "from npu_runtime.core.launch import submit\n"
    "rt = get_runtime(); rt.reset(); rt.init(); rt.set_device(0)\n"
)

PROFILED_CELL = """%%npu_profile
total = 0
for _ in range(3):
    total += 1
    submit(0, name="MatMul_1", op_type="MatMul", cost={"duration_us": 10.0, "bound": "cube"})
submit(0, name="Add_1", op_type="Add", cost={"duration_us": 2.5, "bound": "memory"})
print("done", total)
"""


def test_profile_bundle_is_keyed_to_the_cells_own_lines(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    assert execute(kc, SETUP)[0]["status"] == "ok"
    reply, msgs = execute(kc, PROFILED_CELL)
    assert reply["status"] == "ok", msgs
    assert stdout(msgs) == "done 3\n"  # the cell really ran, in the user namespace
    (display,) = [d for d in of_type(msgs, "display_data") if PROFILE_MIME in d["data"]]
    doc = display["data"][PROFILE_MIME]
    assert doc["schema"] == "ascend-lens.profile/1"
    assert doc["op_count"] == 4 and doc["total_us"] == 32.5
    assert doc["device"] == "Ascend910B2"
    assert [(e["line"], e["op_count"], e["total_us"]) for e in doc["lines"]] == [
        (5, 3, 30.0),
        (6, 1, 2.5),
    ]
    assert doc["lines"][0]["bound"] == "cube"
    assert doc["top_ops"][0] == {
        "op_type": "MatMul",
        "count": 3,
        "total_us": 30.0,
        "share": 0.9231,
        "bound": "cube",
    }
    meta = display["metadata"][PROFILE_MIME]
    assert meta["execution_count"] == reply["execution_count"]
    assert {e["file"] for e in doc["lines"]} == {meta["cell_file"]}

    text = display["data"]["text/plain"]
    count = reply["execution_count"]
    assert f"Cell In[{count}], line 5" in text
    assert "MatMul" in text and "Top ops" in text and "Per line" in text
    html = display["data"]["text/html"]
    assert "<svg" in html and "MatMul_1 (MatMul) 10.00 µs, cube" in html


def test_profile_still_shows_when_the_cell_fails(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, SETUP)
    cell = (
        "%%npu_profile\n"
        'submit(0, name="Add_1", op_type="Add", cost={"duration_us": 1.0, "bound": "memory"})\n'
        "raise RuntimeError('after the op')\n"
    )
    reply, msgs = execute(kc, cell)
    assert reply["status"] == "error" and reply["ename"] == "RuntimeError"
    docs = [
        d["data"][PROFILE_MIME] for d in of_type(msgs, "display_data") if PROFILE_MIME in d["data"]
    ]
    assert docs and docs[0]["op_count"] == 1 and docs[0]["lines"][0]["line"] == 2
    tb = "".join(of_type(msgs, "error")[0]["traceback"])
    assert "line 3" in tb  # the traceback points at the cell's own line too


def test_npu_shows_devices_and_streams(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, SETUP + "s, ret = None, rt.set_device(3)\n")
    reply, msgs = execute(kc, "%npu")
    text = of_type(msgs, "display_data")[0]["data"]["text/plain"]
    assert "Ascend910B2 x8" in text
    assert "acl.init done" in text
    devices = text.split("Devices")[1].split("Streams")[0]
    assert [row.split()[0] for row in devices.strip().splitlines()[2:]] == ["0", "3"]
    assert "Sanitizer findings (0)" in text


def test_npu_reset_and_device_switch(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, SETUP)
    _, msgs = execute(kc, "%npu_device 910B4 --devices 2")
    assert stdout(msgs) == "Emulating 910B4 x2; runtime reset.\n"
    _, msgs = execute(kc, "print(rt.profile.name, rt.device_count, rt.initialized, rt.devices)")
    assert stdout(msgs) == "910B4 2 False {}\n"
    _, msgs = execute(kc, "%npu_device nosuch")
    assert stdout(msgs).startswith("%npu_device: unknown device 'nosuch'")
    _, msgs = execute(kc, "%npu_device 910B --devices 99")
    assert stdout(msgs) == "usage: %npu_device NAME [--devices N]  (N between 1 and 16)\n"
    execute(kc, "rt.init(); rt.set_device(1)")
    _, msgs = execute(kc, "%npu_reset\nprint(rt.initialized, rt.devices)")
    assert stdout(msgs) == "NPU runtime reset (910B4 x2).\nFalse {}\n"
    execute(kc, "%npu_device 910B --devices 8")


PYACL_CELL = """import acl
ret = acl.init()
ret = acl.rt.set_device(0)
p, ret = acl.rt.malloc(1024, 0)
q, ret = acl.rt.malloc(4096, 0)
bufs = [acl.rt.malloc(1 << 20, 2)[0] for _ in range(3)]
ret = acl.rt.free(p)
ret = acl.rt.free(p)
print(ret)
"""


def test_pyacl_failures_are_listed_under_the_cell(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "%npu_reset")
    reply, msgs = execute(kc, PYACL_CELL)
    n = reply["execution_count"]
    assert reply["status"] == "ok"  # pyACL returns codes; the cell itself succeeds
    assert stdout(msgs) == "107000\n"
    (summary,) = of_type(msgs, "display_data")
    text = summary["data"]["text/plain"]
    assert text.startswith("1 ACL call failed and 1 sanitizer finding in this cell")
    rows = text.splitlines()[3:]
    (error,) = [r for r in rows if r.startswith("error ")]
    (finding,) = [r for r in rows if r.startswith("sanitizer: double-free ")]
    assert "107000  ACL_ERROR_RT_PARAM_INVALID  aclrtFree" in error
    assert error.rstrip().endswith(f"Cell In[{n}], line 8")
    assert finding.rstrip().endswith(
        f"Cell In[{n}], line 8; allocated at Cell In[{n}], line 4; freed at Cell In[{n}], line 7"
    )

    _, msgs = execute(kc, "%npu_mem")
    data = of_type(msgs, "display_data")[0]["data"]
    text = data["text/plain"]
    assert "device 0: 3,150,080 of" in text and "in 4 allocation(s)" in text
    table = text.split("Live allocations by source line")[1].split("Memory map")[0]
    rows = table.strip().splitlines()[2:]
    assert len(rows) == 2  # p was freed: only the lines of q and bufs hold memory
    assert f"Cell In[{n}], line 6" in rows[0] and "3,145,728" in rows[0]  # biggest group first
    assert f"Cell In[{n}], line 5" in rows[1] and "4,096" in rows[1]
    assert data["text/html"].count(f"<title>Cell In[{n}], line 6:") == 3  # one block per buffer

    _, msgs = execute(kc, "%npu")
    text = of_type(msgs, "display_data")[0]["data"]["text/plain"]
    assert "Sanitizer findings (1)" in text
    assert "double-free" in text


def test_device_fault_names_sync_and_launch_lines(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, "%npu_reset")
    cell = (
        "import acl\n"
        "from npu_runtime.core.faults import inject\n"
        "from npu_runtime.core.launch import submit\n"
        "acl.init(); acl.rt.set_device(0)\n"
        'inject("op:MatMul:1:507015")\n'
        'submit(0, name="MatMul_1", op_type="MatMul", cost={"duration_us": 5.0})\n'
        "print(acl.rt.synchronize_stream(0))\n"
    )
    reply, msgs = execute(kc, cell)
    assert stdout(msgs) == "507015\n"
    text = of_type(msgs, "display_data")[0]["data"]["text/plain"]
    assert "507015" in text
    n = reply["execution_count"]
    assert f"Cell In[{n}], line 7; launched at Cell In[{n}], line 6" in text


def test_profile_out_writes_msprof_files_and_trace_path(
    kernel: tuple[Any, Any], tmp_path: Path
) -> None:
    _, kc = kernel
    execute(kc, SETUP)
    cell = (
        f"%%npu_profile --out {tmp_path}\n"
        'submit(0, name="Add_1", op_type="Add", cost={"duration_us": 4.0, "bound": "memory"})\n'
    )
    reply, msgs = execute(kc, cell)
    assert reply["status"] == "ok"
    (doc,) = [d["data"][PROFILE_MIME] for d in of_type(msgs, "display_data")]
    assert doc["trace"] is not None and Path(doc["trace"]).is_file()
    assert Path(doc["trace"]).parent == tmp_path
    assert list(tmp_path.glob("op_summary_*.csv"))
    written = json.loads((tmp_path / "lines.json").read_text())
    assert written["lines"] == doc["lines"]


TENSOR_SETUP = "import numpy as np\nimport npu_runtime as nr\n%npu_reset\n"
OVERFLOW = (
    "a = nr.Tensor(np.array([300.0, 2.0]), dtype='float16')\nprint((a * a).numpy().tolist())\n"
)


def test_profile_ascend_pt_writes_torch_npu_dirs(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, SETUP)
    cell = (
        f"%%npu_profile --out {tmp_path} --ascend-pt\n"
        'submit(0, name="Add_1", op_type="Add", cost={"duration_us": 4.0, "bound": "memory"})\n'
    )
    reply, _ = execute(kc, cell)
    assert reply["status"] == "ok"
    (pt_dir,) = tmp_path.glob("*_ascend_pt")
    kernels = (pt_dir / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text()
    assert "Add_1" in kernels
    assert list(tmp_path.glob("op_summary_*.csv"))  # the usual files are still there


def test_profile_ascend_pt_without_out_is_refused(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, "%%npu_profile --ascend-pt\nran = True\n")
    assert reply["status"] == "ok"
    assert stdout(msgs) == "%%npu_profile: --ascend-pt needs --out DIR (the directories go there)\n"
    reply, msgs = execute(kc, "print('ran' in dir())")
    assert stdout(msgs) == "False\n"  # the cell did not run


def test_dump_writes_an_entry_per_op(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP)
    out = tmp_path / "dump"
    cell = (
        f"%%npu_dump {out}\n"
        "a = nr.Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), dtype='float32')\n"
        "b = a @ a\n"
        "c = b + a\n"
    )
    reply, msgs = execute(kc, cell)
    assert reply["status"] == "ok", msgs
    assert stdout(msgs) == f"%%npu_dump: statistics dump, 1 dump.json written: {out}\n"
    doc = json.loads((out / "step0" / "rank0" / "dump.json").read_text())
    assert doc["task"] == "statistics" and doc["dump_data_dir"] is None
    assert list(doc["data"]) == ["Torch.matmul.0.forward", "Torch.add.0.forward"]
    (output,) = doc["data"]["Torch.add.0.forward"]["output"]
    assert output["shape"] == [2, 2] and output["Max"] == 26.0  # [[7,10],[15,22]] + a
    stack = json.loads((out / "step0" / "rank0" / "stack.json").read_text())
    assert stack["0"][0] == ["Torch.matmul.0.forward"]
    assert stack["0"][1][0].endswith(", line 3, in <module>")  # the cell's own line


def test_dump_tensor_level_writes_pt_files(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP)
    cell = f"%%npu_dump {tmp_path} --level tensor\n" + OVERFLOW
    reply, _ = execute(kc, cell)
    assert reply["status"] == "ok"
    rank = tmp_path / "step0" / "rank0"
    doc = json.loads((rank / "dump.json").read_text())
    assert doc["task"] == "tensor"
    (entry,) = doc["data"].values()
    (output,) = entry["output"]
    assert output["data_name"] == "Torch.mul.0.forward.output.0.pt"
    assert (rank / "dump_tensor_data" / output["data_name"]).is_file()


def test_dump_bad_level_is_refused(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, f"%%npu_dump {tmp_path} --level everything\nx = 1\n")
    assert reply["status"] == "ok"
    assert stdout(msgs) == (
        "%%npu_dump: --level 'everything': expected one of statistics, tensor\n"
    )
    assert not list(tmp_path.iterdir())


def test_dump_of_a_cell_without_ops_says_so(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    reply, msgs = execute(kc, f"%%npu_dump {tmp_path / 'd'}\nx = 1\n")
    assert reply["status"] == "ok"
    assert stdout(msgs) == f"%%npu_dump: no op ran; nothing written to {tmp_path / 'd'}\n"
    assert not (tmp_path / "d").exists()


def test_dump_is_written_when_the_cell_fails(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP + "from npu_runtime.core import hooks\n")
    listeners = "print(len(hooks.work_listeners), len(hooks.tensor_listeners))"
    before = stdout(execute(kc, listeners)[1])
    reply, msgs = execute(kc, f"%%npu_dump {tmp_path}\n" + OVERFLOW + "1 / 0\n")
    assert reply["status"] == "error" and reply["ename"] == "ZeroDivisionError"
    doc = json.loads((tmp_path / "step0" / "rank0" / "dump.json").read_text())
    assert len(doc["data"]) == 1
    (out,) = next(iter(doc["data"].values()))["output"]
    assert out["Max"] == float("inf")  # written as Infinity, msprobe's overflow marker
    assert stdout(execute(kc, listeners)[1]) == before  # the dumper is detached


def test_dump_steps_go_to_their_own_directories(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP)
    cell = (
        f"%%npu_dump {tmp_path}\n"
        "a = nr.Tensor(np.ones(4, dtype=np.float32))\n"
        "b = a + a\n"
        "nr.step()\n"
        "c = a * b\n"
    )
    reply, msgs = execute(kc, cell)
    assert reply["status"] == "ok", msgs
    assert stdout(msgs) == f"%%npu_dump: statistics dump, 2 dump.json written: {tmp_path}\n"
    step0 = json.loads((tmp_path / "step0" / "rank0" / "dump.json").read_text())
    step1 = json.loads((tmp_path / "step1" / "rank0" / "dump.json").read_text())
    assert (list(step0["data"]), list(step1["data"])) == (
        ["Torch.add.0.forward"],
        ["Torch.mul.0.forward"],
    )


def test_dump_and_profile_in_one_cell_keep_the_cells_line_numbers(
    kernel: tuple[Any, Any], tmp_path: Path
) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP)
    cell = (
        f"%%npu_dump {tmp_path}\n"
        "%%npu_profile\n"
        "a = nr.Tensor(np.ones(4, dtype=np.float32))\n"
        "b = a + a\n"
        "c = a * b\n"
    )
    reply, msgs = execute(kc, cell)
    assert reply["status"] == "ok", msgs
    (doc,) = [d["data"][PROFILE_MIME] for d in of_type(msgs, "display_data")]
    ops = {e["line"]: e["top_ops"][0]["op_type"] for e in doc["lines"]}
    assert (ops[4], ops[5]) == ("Add", "Mul")
    text = of_type(msgs, "display_data")[0]["data"]["text/plain"]
    assert f"Cell In[{reply['execution_count']}], line 4" in text and "b = a + a" in text
    dump = json.loads((tmp_path / "step0" / "rank0" / "dump.json").read_text())
    assert list(dump["data"]) == ["Torch.add.0.forward", "Torch.mul.0.forward"]
    stack = json.loads((tmp_path / "step0" / "rank0" / "stack.json").read_text())
    assert stack["1"][1][0].endswith(", line 5, in <module>")


def test_dump_into_a_file_is_refused(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    _, kc = kernel
    target = tmp_path / "taken"
    target.write_text("")
    reply, msgs = execute(kc, f"%%npu_dump {target}\nran = 1\n")
    assert reply["status"] == "ok"
    assert (
        stdout(msgs)
        == f"%%npu_dump: cannot dump to {target}: dump output {target} is not a directory\n"
    )


def test_numerics_changes_a_float16_overflow(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    execute(kc, TENSOR_SETUP)
    try:
        assert stdout(execute(kc, OVERFLOW)[1]) == "[inf, 4.0]\n"  # 90000 > float16 max
        _, msgs = execute(kc, "%npu_numerics float32")
        assert stdout(msgs) == (
            "Numerics: float32 (was npu); applies to tensors created from now on.\n"
        )
        assert stdout(execute(kc, OVERFLOW)[1]) == "[90000.0, 4.0]\n"
        assert stdout(execute(kc, "%npu_numerics")[1]) == "Numerics: float32.\n"
        npu_text = of_type(execute(kc, "%npu")[1], "display_data")[0]["data"]["text/plain"]
        assert "Reference numerics: float32 (%npu_numerics npu for the device's)." in npu_text
    finally:
        execute(kc, "%npu_numerics npu")
    assert stdout(execute(kc, OVERFLOW)[1]) == "[inf, 4.0]\n"
    npu_text = of_type(execute(kc, "%npu")[1], "display_data")[0]["data"]["text/plain"]
    assert "Reference numerics" not in npu_text


def test_numerics_bad_mode_is_refused(kernel: tuple[Any, Any]) -> None:
    _, kc = kernel
    _, msgs = execute(kc, "%npu_numerics float16")
    assert stdout(msgs) == "usage: %npu_numerics [npu|float32|float64]\n"
    assert stdout(execute(kc, "%npu_numerics")[1]) == "Numerics: npu.\n"
