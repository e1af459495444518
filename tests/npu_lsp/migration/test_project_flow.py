"""Device values that cross modules of a project (`rules/migration/project.py`), through
`ascend-lens check` / `check --fix` as a subprocess: a fix-all of the project moves the
device strings of every file together, or none of them.

The shape is nanoGPT's: the training script computes a device type and passes it to a
method of the model, whose module compares it with "cuda" (written for these tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXE = [sys.executable, "-m", "ascend_lens", "check", "--select", "NPU"]

MODEL = """import torch


class Net(torch.nn.Module):
    def configure_optimizers(self, lr, device_type):
        fused = device_type == "cuda"
        return torch.optim.AdamW(self.parameters(), lr=lr, fused=fused)


def log_device(name, device="cpu"):
    print(f"running on {device}", name)
"""
MODEL_FIXED = MODEL.replace('device_type == "cuda"', 'device_type == "npu"').replace(
    "import torch\n", "import torch\nimport torch_npu\n", 1
)
TRAIN = """import torch
from model import Net, log_device

device = "cuda"
device_type = "cuda" if "cuda" in device else "cpu"
model = Net().to(device)
optimizer = model.configure_optimizers(1e-3, device_type)
log_device("runs/cuda", device)
torch.cuda.manual_seed(0)
with torch.autocast(device_type=device_type):
    pass
"""
TRAIN_FIXED = """import torch
import torch_npu
from model import Net, log_device

device = "npu"
device_type = "npu" if "npu" in device else "cpu"
model = Net().to(device)
optimizer = model.configure_optimizers(1e-3, device_type)
log_device("runs/cuda", device)
torch.npu.manual_seed(0)
with torch.autocast(device_type=device_type):
    pass
"""


def project(tmp_path: Path, train: str = TRAIN) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\n', encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    (tmp_path / "train.py").write_text(train, encoding="utf-8")
    return tmp_path


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_check_reports_the_comparison_in_the_module_the_device_is_passed_to(
    tmp_path: Path,
) -> None:
    root = project(tmp_path)
    proc = run(root, "--no-cache", ".")
    lines = proc.stdout.splitlines()
    assert 'model.py:6:32: NPU204 [*] "cuda" is compared with a device; use "npu" on Ascend' in (
        line.removesuffix(" (warning)") for line in lines
    )
    # the value passed to `configure_optimizers` is a device there, not an escape: safe fix
    assert not any("unsafe" in line for line in lines)
    assert lines[-1] == "Found 5 problems. (5 fixable with `--fix`)"


def test_check_fix_moves_both_files_together(tmp_path: Path) -> None:
    root = project(tmp_path)
    proc = run(root, "--fix", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "model.py").read_text(encoding="utf-8") == MODEL_FIXED
    assert (root / "train.py").read_text(encoding="utf-8") == TRAIN_FIXED
    assert proc.stdout == "Found 5 problems (5 fixed, 0 remaining).\n"


def test_alone_the_training_script_keeps_its_device_group_back(tmp_path: Path) -> None:
    """Without the model's module, `device_type` escapes into a call nobody can see into:
    the group is unsafe, and `.cuda()`/`torch.cuda.*` stay with it (never half moved)."""
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    proc = run(tmp_path, "--fix", "train.py")
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == TRAIN
    assert proc.returncode == 1
    assert (
        'train.py:4:10: NPU204 [*] "cuda" is used as a CUDA device at line 6; use "npu" on Ascend'
        " (fix unsafe: the value is also used for something else at line 7) (warning)"
    ) in proc.stdout.splitlines()
    assert (
        "train.py:9:1: NPU202 [*] `torch.cuda.manual_seed` targets CUDA devices; use"
        " `torch.npu.manual_seed` (fix unsafe: the value is also used for something else at"
        " line 7) (warning)"
    ) in proc.stdout.splitlines()


def test_the_cached_result_of_a_module_follows_its_callers(tmp_path: Path) -> None:
    """model.py's finding depends on train.py, which model.py does not import: editing
    train.py must change model.py's result even when model.py comes from the cache."""
    root = project(tmp_path)
    first = run(root, ".")
    assert "model.py:6:32: NPU204" in first.stdout
    train = TRAIN.replace(
        "configure_optimizers(1e-3, device_type)", 'configure_optimizers(1e-3, "cpu")'
    )
    (root / "train.py").write_text(train, encoding="utf-8")
    second = run(root, ".")
    assert "model.py" not in second.stdout
    assert "train.py:4:10: NPU204" in second.stdout
