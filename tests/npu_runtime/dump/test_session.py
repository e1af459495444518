"""`npu_runtime.dump()`: msprobe's dump layout, names, statistics and tensor files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npu_runtime
from npu_runtime import Tensor
from npu_runtime.core.faults import injector
from npu_runtime.core.runtime import get_runtime
from npu_runtime.dump import Dumper

from .pt_reader import load_pt


@pytest.fixture(autouse=True)
def clean_runtime() -> Iterator[None]:
    get_runtime().reset()
    yield
    get_runtime().reset()


def _doc(root: Path, step: int = 0, rank: int = 0) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (root / f"step{step}" / f"rank{rank}" / "dump.json").read_text()
    )
    return doc


def _stats(a: np.ndarray) -> tuple[float, float, float, float]:
    v = a.astype(np.float64)
    return float(v.max()), float(v.min()), float(v.mean()), float(np.linalg.norm(v))


def test_statistics_dump_names_ops_as_msprobe_and_matches_numpy(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float16)
    w = rng.standard_normal((8, 3)).astype(np.float16)
    with npu_runtime.dump(tmp_path / "d") as d:
        a, b = Tensor(x), Tensor(w)
        y = a @ b
        z = y + y
    host_y, host_z = y.numpy(), z.numpy()
    doc = _doc(tmp_path / "d")
    assert isinstance(d, Dumper)
    assert (doc["task"], doc["level"], doc["framework"], doc["dump_data_dir"]) == (
        "statistics", "L1", "pytorch", None,
    )  # fmt: skip
    assert list(doc["data"]) == ["Torch.matmul.0.forward", "Torch.add.0.forward"]
    mm = doc["data"]["Torch.matmul.0.forward"]
    assert [t["shape"] for t in mm["input_args"]] == [[4, 8], [8, 3]]
    assert {t["dtype"] for t in mm["input_args"] + mm["output"]} == {"torch.float16"}
    assert all(t["requires_grad"] is False and t["type"] == "torch.Tensor" for t in mm["output"])
    assert mm["input_kwargs"]["transpose_x1"] == {"type": "bool", "value": False}
    out = mm["output"][0]
    assert (out["Max"], out["Min"], out["Mean"], out["Norm"]) == pytest.approx(_stats(host_y))
    add_out = doc["data"]["Torch.add.0.forward"]["output"][0]
    assert add_out["Max"] == pytest.approx(float(host_z.astype(np.float64).max()))
    stack = json.loads((tmp_path / "d/step0/rank0/stack.json").read_text())
    assert stack["0"][0] == ["Torch.matmul.0.forward"]
    assert stack["0"][1][0].startswith(f'File "{__file__}", line ')


def test_call_numbers_count_per_api_and_restart_each_step(tmp_path: Path) -> None:
    with npu_runtime.dump(tmp_path) as d:
        a = Tensor(np.ones((2, 2), np.float32))
        _ = (a + a) + a
        assert d.step() == 1
        _ = a + a
    assert list(_doc(tmp_path, 0)["data"]) == ["Torch.add.0.forward", "Torch.add.1.forward"]
    assert list(_doc(tmp_path, 1)["data"]) == ["Torch.add.0.forward"]


def test_float16_overflow_shows_as_inf_in_the_output_statistics(tmp_path: Path) -> None:
    with npu_runtime.dump(tmp_path):
        a = Tensor(np.full((2, 2), 300.0, np.float16))
        _ = a * a  # 90000 > 65504
    out = _doc(tmp_path)["data"]["Torch.mul.0.forward"]["output"][0]
    assert out["Max"] == float("inf") and out["Norm"] == float("inf")
    assert '"Max": Infinity' in (tmp_path / "step0/rank0/dump.json").read_text()


def test_each_device_is_a_rank(tmp_path: Path) -> None:
    rt = get_runtime()
    rt.init()
    with npu_runtime.dump(tmp_path):
        for dev in (0, 1):
            rt.set_device(dev)
            a = Tensor(np.ones(3, np.float32))
            _ = a + a
    assert list(_doc(tmp_path, rank=0)["data"]) == ["Torch.add.0.forward"]
    assert list(_doc(tmp_path, rank=1)["data"]) == ["Torch.add.0.forward"]


def test_tensor_level_writes_pt_files_holding_the_device_values(tmp_path: Path) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    with npu_runtime.dump(tmp_path, level="tensor"):
        a = Tensor(x, dtype="bfloat16")
        y = npu_runtime.tensor.softmax(a)
    host = y.numpy()
    doc = _doc(tmp_path)
    rank = tmp_path / "step0" / "rank0"
    assert doc["task"] == "tensor"
    assert doc["dump_data_dir"] == str(rank / "dump_tensor_data") + "/"
    (entry,) = doc["data"].values()
    assert entry["output"][0]["dtype"] == "torch.bfloat16"
    name = entry["output"][0]["data_name"]
    assert name == "Functional.softmax.0.forward.output.0.pt"
    storage, got = load_pt(rank / "dump_tensor_data" / name)
    assert storage == "BFloat16Storage"
    np.testing.assert_array_equal(got, host)
    _, x_in = load_pt(rank / "dump_tensor_data" / entry["input_args"][0]["data_name"])
    assert x_in.dtype == host.dtype and x_in.shape == (3, 4)


def test_an_op_whose_kernel_never_ran_is_not_dumped(tmp_path: Path) -> None:
    injector.add("op:Mul:1:507015")
    try:
        with npu_runtime.dump(tmp_path):
            a = Tensor(np.ones(2, np.float32))
            _ = a * a
            _ = a + a
    finally:
        injector.clear()
    assert list(_doc(tmp_path)["data"]) == ["Torch.add.0.forward"]


def test_bad_level_and_file_as_directory_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'full'.*statistics, tensor"):
        npu_runtime.dump(tmp_path, level="full")
    f = tmp_path / "file"
    f.write_text("")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        npu_runtime.dump(f).start()


def test_nothing_is_dumped_after_stop(tmp_path: Path) -> None:
    with npu_runtime.dump(tmp_path) as d:
        a = Tensor(np.ones(2, np.float32))
    _ = a + a
    assert d.files == []
    assert not (tmp_path / "step0").exists()
