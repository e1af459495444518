"""`npu_runtime.step()` splits every active profile and dump the same way."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import npu_runtime
from npu_runtime import Tensor
from npu_runtime.core.runtime import get_runtime

SCRIPT = textwrap.dedent(
    """\
    import numpy as np
    import npu_runtime
    from npu_runtime import Tensor
    a = Tensor(np.ones((4, 4), np.float16))
    for _ in range(2):
        _ = a @ a
        npu_runtime.step()
    """
)


@pytest.fixture(autouse=True)
def clean_runtime() -> Iterator[None]:
    get_runtime().reset()
    yield
    get_runtime().reset()


def _dumped(root: Path, step: int) -> list[str]:
    return list(json.loads((root / f"step{step}/rank0/dump.json").read_text())["data"])


def test_step_reaches_the_profile_and_the_dump(tmp_path: Path) -> None:
    with npu_runtime.profile(None) as prof, npu_runtime.dump(tmp_path) as d:
        a = Tensor(np.ones(2, np.float32))
        _ = a + a
        assert npu_runtime.step() == 2
        _ = a * a
    assert npu_runtime.step() == 0  # nothing active any more
    assert (d.step_no, prof.collector.step_no) == (1, 1)
    assert [r.step for r in prof.records if r.kind == "op"] == [0, 1]
    assert _dumped(tmp_path, 0) == ["Torch.add.0.forward"]
    assert _dumped(tmp_path, 1) == ["Torch.mul.0.forward"]


def test_a_launched_script_marks_steps_in_both_outputs(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPU_")} | {"PYTHONPATH": ""}
    res = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", "--profile", "p",
         "--profile-ascend-pt", "--profile-top", "0", "--dump", "d", "s.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert _dumped(tmp_path / "d", 0) == _dumped(tmp_path / "d", 1) == ["Torch.matmul.0.forward"]
    (kernels,) = tmp_path.glob("p/*_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv")
    with open(kernels, newline="") as f:
        assert [(k["Type"], k["Step Id"]) for k in csv.DictReader(f)] == [
            ("MatMul", "1"),
            ("MatMul", "2"),
        ]
