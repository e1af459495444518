"""`ascend-lens check --fix / --diff / --unsafe-fixes` as users run them: a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXE = [sys.executable, "-m", "ascend_lens", "check"]

TRAIN = """import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="nccl", type=str)
parser.add_argument("--out", default="runs/cuda")
args = parser.parse_args()


def main_worker(gpu):
    dist.init_process_group(backend=args.dist_backend)
    torch.cuda.set_device(gpu)
    model = Net().cuda(gpu)
    loc = f"cuda:{gpu}"
    state = torch.load("ckpt.pt", map_location=loc)
    torch.backends.cudnn.benchmark = True
    print("cuda ready")
"""
TRAIN_FIXED = """import argparse
import os
import torch
import torch_npu
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="hccl", type=str)
parser.add_argument("--out", default="runs/cuda")
args = parser.parse_args()


def main_worker(gpu):
    dist.init_process_group(backend=args.dist_backend)
    torch.npu.set_device(gpu)
    model = Net().npu(gpu)
    loc = f"npu:{gpu}"
    state = torch.load("ckpt.pt", map_location=loc)
    torch.backends.cudnn.benchmark = True
    print("cuda ready")
"""
TF32 = "import torch\n\ntorch.backends.cuda.matmul.allow_tf32 = True\nx = y.cuda()\n"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, "--select", "NPU", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_fix_rewrites_the_file_and_reports_what_remains(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN, encoding="utf-8")
    proc = run("--fix", "train.py", cwd=tmp_path)
    assert script.read_text(encoding="utf-8") == TRAIN_FIXED
    assert proc.returncode == 1  # the cuDNN setting has no fix and remains
    assert proc.stdout == (
        "train.py:19:5: NPU208 `torch.backends.cudnn.benchmark` has no effect on Ascend NPUs"
        " (info)\n"
        "Found 5 problems (4 fixed, 1 remaining).\n"
    )
    again = run("--fix", "train.py", cwd=tmp_path)
    assert again.returncode == 1
    assert again.stdout.endswith("Found 1 problem (0 fixed, 1 remaining).\n")
    assert script.read_text(encoding="utf-8") == TRAIN_FIXED


def test_fix_exits_0_when_everything_was_fixed(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\nx = t.cuda()\n", encoding="utf-8")
    proc = run("--fix", "a.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "Found 1 problem (1 fixed, 0 remaining).\n")
    assert (tmp_path / "a.py").read_text() == "import torch\nimport torch_npu\nx = t.npu()\n"
    clean = run("--fix", "a.py", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "All checks passed!\n")


def test_diff_prints_a_unified_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(TRAIN, encoding="utf-8")
    proc = run("--diff", "train.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert script.read_text(encoding="utf-8") == TRAIN
    assert proc.stdout.startswith("--- train.py\n+++ train.py\n@@ -1,19 +1,20 @@\n")
    changed = [line for line in proc.stdout.splitlines() if line.startswith(("+", "-"))][2:]
    assert changed == [
        "+import torch_npu",
        '-parser.add_argument("--dist-backend", default="nccl", type=str)',
        '+parser.add_argument("--dist-backend", default="hccl", type=str)',
        "-    torch.cuda.set_device(gpu)",
        "-    model = Net().cuda(gpu)",
        '-    loc = f"cuda:{gpu}"',
        "+    torch.npu.set_device(gpu)",
        "+    model = Net().npu(gpu)",
        '+    loc = f"npu:{gpu}"',
    ]
    assert proc.stderr == "Would fix 4 problems.\n"
    # Applying the diff gives exactly what --fix writes.
    patched = tmp_path / "patched"
    patched.mkdir()
    (patched / "train.py").write_text(TRAIN, encoding="utf-8")
    subprocess.run(["patch", "-p0", "-s"], input=proc.stdout, text=True, cwd=patched, check=True)
    assert (patched / "train.py").read_text(encoding="utf-8") == TRAIN_FIXED


def test_diff_exits_0_when_nothing_would_change(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n")
    proc = run("--diff", "ok.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "No problems would be fixed.\n")


def test_unsafe_fixes_are_applied_only_when_asked(tmp_path: Path) -> None:
    script = tmp_path / "tf32.py"
    script.write_text(TF32, encoding="utf-8")
    safe = run("--fix", "tf32.py", cwd=tmp_path)
    assert safe.returncode == 1
    assert safe.stdout.splitlines()[-2:] == [
        "Found 2 problems (1 fixed, 1 remaining).",
        "No more fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    assert "torch.backends.cuda.matmul.allow_tf32 = True" in script.read_text()
    diff = run("--diff", "tf32.py", cwd=tmp_path)
    assert (diff.returncode, diff.stdout) == (0, "")
    assert diff.stderr == (
        "No problems would be fixed (1 hidden fix can be enabled with the `--unsafe-fixes`"
        " option).\n"
    )
    unsafe = run("--fix", "--unsafe-fixes", "tf32.py", cwd=tmp_path)
    assert (unsafe.returncode, unsafe.stdout) == (0, "Found 1 problem (1 fixed, 0 remaining).\n")
    assert script.read_text() == (
        "import torch\nimport torch_npu\n\ntorch.npu.matmul.allow_hf32 = True\nx = y.npu()\n"
    )


def test_a_device_also_used_as_a_folder_name_moves_only_with_unsafe_fixes(tmp_path: Path) -> None:
    text = (
        "import os\nimport torch\n\n"
        'device = "cuda"\nmodel.to(device)\nckpt = os.path.join("out", device)\n'
        'x = y.to("cuda:0")\n'
    )
    script = tmp_path / "m.py"
    script.write_text(text)
    safe = run("--fix", "m.py", cwd=tmp_path)
    assert safe.returncode == 1
    assert script.read_text() == text  # both device strings stay: never half moved
    assert run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path).returncode == 0
    assert script.read_text() == text.replace(
        "import torch\n", "import torch\nimport torch_npu\n"
    ).replace('"cuda', '"npu')


def test_fix_keeps_crlf_and_bom_and_fixes_every_file_of_a_folder(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    crlf = tmp_path / "pkg" / "crlf.py"
    crlf.write_bytes(b"import torch\r\nx = t.to('cuda')\r\n")
    bom = tmp_path / "pkg" / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfimport torch\nx = t.cuda()\n")
    untouched = tmp_path / "pkg" / "notes.py"
    untouched.write_bytes(b"FOLDER = 'cuda'\n")
    proc = run("--fix", "pkg", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "Found 2 problems (2 fixed, 0 remaining).\n")
    assert crlf.read_bytes() == b"import torch\r\nimport torch_npu\r\nx = t.to('npu')\r\n"
    assert bom.read_bytes() == b"\xef\xbb\xbfimport torch\nimport torch_npu\nx = t.npu()\n"
    assert untouched.read_bytes() == b"FOLDER = 'cuda'\n"


def test_fix_with_json_format_lists_what_remains(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    proc = run("--fix", "--format", "json", "train.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert [(i["code"], i["line"]) for i in json.loads(proc.stdout)] == [("NPU208", 19)]


def test_fix_leaves_a_file_with_a_syntax_error_alone(tmp_path: Path) -> None:
    text = "import torch\nx = t.cuda(\n"
    (tmp_path / "broken.py").write_text(text)
    proc = run("--fix", "broken.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert "AL001" in proc.stdout
    assert (tmp_path / "broken.py").read_text() == text


@pytest.mark.parametrize("flag", ["--fix", "--diff"])
def test_fix_refuses_unreadable_files_cleanly(tmp_path: Path, flag: str) -> None:
    (tmp_path / "bin.py").write_bytes(b"\x00\x01import torch")
    proc = run(flag, "bin.py", cwd=tmp_path)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == (1 if flag == "--fix" else 0)


def test_the_plain_check_says_how_many_problems_fix_would_fix(tmp_path: Path) -> None:
    (tmp_path / "t.py").write_text(TF32, encoding="utf-8")
    proc = run("t.py", cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == (
        "Found 2 problems. (1 fixable with `--fix`, 1 more with `--fix --unsafe-fixes`)"
    )
    (tmp_path / "u.py").write_text("import torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    assert run("u.py", cwd=tmp_path).stdout.splitlines()[-1] == (
        "Found 1 problem. (1 fixable with `--fix --unsafe-fixes`)"
    )
