"""Launch attributes for precision work: `dump`, `dumpLevel`, `numerics`, `profileAscendPt`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dap_client import DapClient, line_of

from npu_debug import config


def run_to_exit(dap: DapClient, launch: dict) -> int:
    dap.start(launch)
    return int(dap.event("exited")["exitCode"])


def test_dump_writes_msprobe_entries_naming_the_programs_lines(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("overflow.py")
    assert run_to_exit(dap, {"program": str(path), "dump": "dump", "cwd": str(tmp_path)}) == 0
    assert "result [inf, 6.0]\n" in dap.outputs()  # npu numerics: float16 overflows
    rank = tmp_path / "dump" / "step0" / "rank0"  # relative to the launch's cwd
    doc = json.loads((rank / "dump.json").read_text())
    assert (doc["task"], doc["level"], doc["dump_data_dir"]) == ("statistics", "L1", None)
    assert list(doc["data"]) == ["Torch.mul.0.forward", "Torch.add.0.forward"]
    (mul,) = doc["data"]["Torch.mul.0.forward"]["output"]
    assert (mul["dtype"], mul["Max"]) == ("torch.float16", float("inf"))
    stack = json.loads((rank / "stack.json").read_text())
    assert stack["0"] == [
        ["Torch.mul.0.forward"],
        [f'File "{path}", line {line_of(path, "mul")}, in <module>'],
    ]
    assert f"dump written to {tmp_path / 'dump'}\n" in dap.outputs("stderr")


def test_tensor_dump_under_float32_numerics_keeps_the_declared_dtype(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("overflow.py")
    out = tmp_path / "ref"
    launch = {"program": str(path), "dump": str(out), "dumpLevel": "tensor", "numerics": "float32"}
    assert run_to_exit(dap, launch) == 0
    assert "result [90300.0, 6.0]\n" in dap.outputs()  # held as float32: no overflow
    rank = out / "step0" / "rank0"
    doc = json.loads((rank / "dump.json").read_text())
    assert doc["task"] == "tensor"
    (mul,) = doc["data"]["Torch.mul.0.forward"]["output"]
    assert (mul["dtype"], mul["Max"]) == ("torch.float16", 90000.0)
    assert (rank / "dump_tensor_data" / mul["data_name"]).is_file()


def test_profile_ascend_pt_writes_the_torch_npu_directory(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("overflow.py")
    out = tmp_path / "prof"
    assert (
        run_to_exit(dap, {"program": str(path), "profile": str(out), "profileAscendPt": True}) == 0
    )
    (pt_dir,) = out.glob("*_ascend_pt")
    kernels = (pt_dir / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").read_text()
    assert kernels.count("\n") == 3  # header, Mul, Add
    assert (out / "lines.json").is_file()


BAD = [
    ({"module": "m", "dump": "d", "dumpLevel": "full"}, "'dumpLevel' must be one of"),
    ({"module": "m", "dumpLevel": "tensor"}, "'dumpLevel' needs 'dump'"),
    ({"module": "m", "dump": 3}, "'dump' must be a directory, got 3"),
    ({"module": "m", "numerics": "float16"}, "'numerics' must be one of 'npu', 'float32'"),
    ({"module": "m", "profileAscendPt": "yes"}, "'profileAscendPt' must be true or false"),
    ({"module": "m", "profile": False, "profileAscendPt": True}, "'profileAscendPt' needs a"),
]


def test_bad_precision_attributes_are_error_responses(dap: DapClient) -> None:
    dap.ok("initialize", {"adapterID": "ascend-npu", "pathFormat": "path"})
    for arguments, message in BAD:
        response = dap.request("launch", arguments)
        assert response["success"] is False, arguments
        assert message in response["message"], response["message"]
        assert message in response["body"]["error"]["format"]


def test_dump_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(config.ConfigError) as info:
        config.parse({"module": "m", "dump": "f", "cwd": str(tmp_path)})
    assert str(info.value) == "launch attribute 'dump': f exists and is not a directory"


def test_the_adapters_choices_are_the_runtimes() -> None:
    from npu_runtime.dump.session import LEVELS
    from npu_runtime.numerics import NUMERICS_MODES

    assert config.DUMP_LEVELS == LEVELS
    assert config.NUMERICS_MODES == NUMERICS_MODES


def test_dump_is_written_when_the_program_exits_with_an_error(
    dap: DapClient, program, tmp_path: Path
) -> None:
    path = program("overflow_then_fail.py")
    assert run_to_exit(dap, {"program": str(path), "dump": str(tmp_path / "d")}) == 3
    doc = json.loads((tmp_path / "d" / "step0" / "rank0" / "dump.json").read_text())
    assert list(doc["data"]) == ["Torch.mul.0.forward"]
