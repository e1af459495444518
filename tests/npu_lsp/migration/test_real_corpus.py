"""`ascend-lens check --fix` on training scripts in the shape of public PyTorch projects
(fixtures/real/, sources in its SOURCES.md), one project folder at a time, as a subprocess.

After the fix, every file of the project

- still compiles;
- has no migration finding left that a safe fix could have removed: what remains either has
  no fix or says in its message why there is no safe one;
- is never half moved: its device strings are all "npu" or all "cuda" (a "cuda" held back
  because its fix is unsafe), and no `.npu()` / `torch.npu.*` sits beside a "cuda" device;
  its backend names are all "hccl" or all "nccl";
- keeps every string on a line tagged `# keep` (a "cuda" or "nccl" that is not a device or a
  backend: help texts, folder and file names, dict keys, environment variables, log tags).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "fixtures" / "real"
PROJECTS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
EXE = [sys.executable, "-m", "ascend_lens", "check", "--select", "NPU", "--no-cache"]
#: rules whose findings a fix removes; one left must say why it was not fixed
MECHANICAL = {"NPU201", "NPU202", "NPU203", "NPU204", "NPU205", "NPU206", "NPU209"}
_WHY = ("(no fix:", "(fix unsafe:", "(no automatic fix")
_FINDING = re.compile(r"^(?P<path>.+?\.py):(?P<line>\d+):\d+: (?P<code>[A-Z]+\d+) (?P<text>.*)$")
_DEVICE = re.compile(r"(cuda|npu)(:\d*)?")
_BACKEND = re.compile(r"(nccl|hccl)", re.IGNORECASE)


def fix_project(name: str, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    root = tmp_path / name
    shutil.copytree(CORPUS / name, root)
    (root / "pyproject.toml").write_text('[project]\nname = "corpus"\n', encoding="utf-8")
    proc = subprocess.run(
        [*EXE, "--fix", "."], cwd=root, capture_output=True, text=True, timeout=120
    )
    return root, proc


def strings(text: str, keep: bool) -> Counter[str]:
    """String constants on lines tagged `# keep` (keep=True) or on the other lines."""
    lines = text.splitlines()
    out: Counter[str] = Counter()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            tagged = lines[node.lineno - 1].rstrip().endswith("# keep")
            if tagged == keep:
                out[node.value] += 1
        elif isinstance(node, ast.JoinedStr) and not keep:
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                out[head.value] += 1
    return out


def heads(found: Counter[str], pattern: re.Pattern[str]) -> set[str]:
    return {pattern.fullmatch(s).group(1).lower() for s in found if pattern.fullmatch(s)}  # type: ignore[union-attr]


def test_the_corpus_is_large_and_varied() -> None:
    files = list(CORPUS.rglob("*.py"))
    assert len(files) >= 30
    assert len(PROJECTS) >= 20
    text = "\n".join(f.read_text(encoding="utf-8") for f in files)
    for idiom in ('f"cuda:{', "map_location", "dist_backend", "is_nccl_available", "getattr(args,"):
        assert idiom in text, idiom


@pytest.mark.parametrize("name", PROJECTS)
def test_check_fix_migrates_the_project_consistently(name: str, tmp_path: Path) -> None:
    root, proc = fix_project(name, tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    left: dict[str, list[tuple[str, str]]] = {}
    for line in proc.stdout.splitlines():
        m = _FINDING.match(line)
        if m:
            left.setdefault(m.group("path"), []).append((m.group("code"), m.group("text")))
    for fixed in sorted(root.rglob("*.py")):
        rel = fixed.relative_to(root).as_posix()
        before = (CORPUS / name / rel).read_text(encoding="utf-8")
        after = fixed.read_text(encoding="utf-8")
        ast.parse(after)  # still compiles
        for code, text in left.get(rel, []):
            if code in MECHANICAL:
                assert any(w in text for w in _WHY), (rel, code, text)
        assert strings(after, keep=True) == strings(before, keep=True), rel
        moved = strings(after, keep=False)
        devices = heads(moved, _DEVICE)
        assert len(devices) <= 1, (rel, devices)
        if "cuda" in devices:
            assert ".npu(" not in after and "torch.npu." not in after, rel
            assert any("(fix unsafe:" in t or "(no fix:" in t for _c, t in left.get(rel, [])), rel
        assert len(heads(moved, _BACKEND)) <= 1, rel


def test_the_corpus_moves_where_it_should(tmp_path: Path) -> None:
    """Spot checks of what moved, across modules: the device type nanoGPT's model module
    compares, the `--device` default timm's training script parses and its utils read with
    getattr, yolov5's device-string parsing, detectron2's upper-case backend."""
    expected = {
        ("nanogpt", "model.py"): ['device_type == "npu"'],
        ("timm", "train.py"): ['"--device", default="npu"', 'device.type in ("npu",)'],
        ("timm", "utils/distributed.py"): ['getattr(args, "device", "npu")', '"cuda": "nccl"'],
        ("yolov5", "utils/torch_utils.py"): ['.replace("npu:", "")', 'arg = "npu:0"'],
        ("yolov5", "train.py"): ['"hccl" if dist.is_hccl_available() else "gloo"'],
        # a script importing no torch compares a device another module made
        ("yolov5", "benchmarks.py"): ['if "npu" in device.type:'],
        ("detectron2", "launch.py"): ['backend="HCCL" if has_gpu else "GLOO"'],
        ("mae", "main_pretrain.py"): ['"--device", default="npu"'],
        # a yacs config module that never imports torch: its device is read by another
        ("d2_config", "config/defaults.py"): ['_C.MODEL.DEVICE = "npu"', '"./output/cuda_runs"'],
        ("d2_config", "modeling/build.py"): ['"npu:{}".format(gpuid)'],
        ("d2_config", "lazy/train_config.py"): ['device="npu"', 'output_dir="./output"'],
        # `getattr(torch, device)` is the device's module, not an escape; torch_npu has
        # the CUDA RNG-state functions of the same name
        # a device list beside a device object, `product` loops, unittest comparisons
        ("mme_tests", "base_model_cases.py"): [
            'cuda_devices = ["npu", 0, torch.device("npu")]',
            'device_types = ["cpu", "npu"]',
            'self.assertEqual(out.device.type, "npu")',
        ],
        # list concatenation, `.append(...)` and a method's return value carry devices
        ("d2_tests", "export_cases.py"): [
            'testing_devices = ["cpu", "npu:0"]',
            'testing_devices.append(f"npu:{torch.npu.device_count() - 1}")',
            '["cpu"] + (["npu"] if torch.npu.is_available() else [])',
        ],
        # `<device>.type == "cuda"` moves with the `.cuda()` of the branch it guards
        ("accel_bnb", "bnb.py"): ['if model_device.type == "npu":', "model.npu(torch.npu"],
        # the flags a dispatch tests, computed ahead of it, stay with it
        ("accel_dispatch", "loader.py"): [
            'device=torch.device("npu")',
            'self.is_cuda = device.type == "cuda" and torch.cuda.is_available()',
            "stream = torch.cuda.Stream(",
        ],
        ("accel_dispatch", "state.py"): [
            'device = "npu"',
            "torch.npu.get_rng_state_all()",
            "torch.npu.set_rng_state_all(",
            "torch.npu.FloatTensor([0.0])",
        ],
    }
    fixed_roots: dict[str, Path] = {}
    for (name, rel), snippets in expected.items():
        if name not in fixed_roots:
            fixed_roots[name], _ = fix_project(name, tmp_path)
        text = (fixed_roots[name] / rel).read_text(encoding="utf-8")
        for snippet in snippets:
            assert snippet in text, (name, rel, snippet)


def test_code_that_already_dispatches_to_the_npu_is_left_alone(tmp_path: Path) -> None:
    """Accelerate's and MMEngine's device-generic code: the CUDA branch of a dispatch that
    has an NPU branch never runs on Ascend, a class's own `cuda()` implements `.cuda()`, and
    NPU branches guarded by an availability query need no top-level `import torch_npu`
    (which would break the module where torch_npu is not installed)."""
    root, proc = fix_project("accel_dispatch", tmp_path)
    for rel in ("memory.py", "imports.py"):
        before = (CORPUS / "accel_dispatch" / rel).read_text(encoding="utf-8")
        assert (root / rel).read_text(encoding="utf-8") == before, rel
        assert f"{rel}:" not in proc.stdout, proc.stdout


def test_cpp_extensions_with_cuda_sources_are_cuda_builds(tmp_path: Path) -> None:
    """fairseq builds its CUDA kernels as `CppExtension`s with .cu sources (or nvcc flags):
    BuildExtension compiles them with nvcc all the same. The plain C++ one is no finding."""
    root = tmp_path / "fairseq_setup"
    shutil.copytree(CORPUS / "fairseq_setup", root)
    proc = subprocess.run(
        [*EXE, "--select", "NPU207", "."], cwd=root, capture_output=True, text=True, timeout=120
    )
    found = [
        (m.group("line"), m.group("code"))
        for m in map(_FINDING.match, proc.stdout.splitlines())
        if m
    ]
    assert found == [("18", "NPU207"), ("25", "NPU207")], proc.stdout
    assert "`CppExtension` compiles its .cu sources with nvcc" in proc.stdout


def test_tensorrt_is_a_cuda_only_package(tmp_path: Path) -> None:
    """yolov5's TensorRT backend: the engine runs on NVIDIA GPUs only (NPU207), reported at
    the import inside the function that loads it."""
    root = tmp_path / "yolov5"
    shutil.copytree(CORPUS / "yolov5", root)
    proc = subprocess.run(
        [*EXE, "--select", "NPU207", "models"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "models/common.py:7:12: NPU207 `tensorrt` is CUDA-only" in proc.stdout, proc.stdout


def test_tensor_is_cuda_is_reported_without_a_fix(tmp_path: Path) -> None:
    """`.is_cuda` is False for NPU tensors: reported (NPU201) where a tensor's attribute is
    read, never rewritten (it may guard a CUDA-only kernel whose fallback the NPU needs), and
    not for a class's own `is_cuda` flag."""
    root, proc = fix_project("tensor_is_cuda", tmp_path)
    found = [
        (m.group("line"), m.group("code"), m.group("text").split(";")[0])
        for m in map(_FINDING.match, proc.stdout.splitlines())
        if m and "is_cuda" in m.group("text")
    ]
    first = "`.is_cuda` is False for a tensor on an NPU"
    assert found == [("16", "NPU201", first), ("24", "NPU201", first)], proc.stdout
    text = (root / "models.py").read_text(encoding="utf-8")
    assert "if input.is_cuda and self.ngpu > 1:" in text
    assert "if not x.is_cuda:" in text
    loader = (root / "loader.py").read_text(encoding="utf-8")
    assert "torch.npu.Stream() if self.is_cuda else None" in loader


def test_the_text_of_a_device_compared_is_no_escape(tmp_path: Path) -> None:
    """CLIP's `load` compares `str(device) == "cpu"`, litgpt hands `fabric.device` to a
    function of another module that only does that: both are reads of the device, so the
    fixes are safe and move (they were unsafe: "also used for something else")."""
    root, proc = fix_project("clip_load", tmp_path)
    assert "fix unsafe" not in proc.stdout, proc.stdout
    clip = (root / "clip.py").read_text(encoding="utf-8")
    assert '"npu" if torch.npu.is_available() else "cpu"' in clip
    api = (root / "litgpt" / "api.py").read_text(encoding="utf-8")
    assert 'fabric.device.type == "npu"' in api and "torch.npu.max_memory_allocated" in api


def test_a_script_without_torch_moving_a_model_is_a_device_use(tmp_path: Path) -> None:
    """segment-anything's scripts/amg.py imports no torch, only the package built on it:
    `model.to(device=args.device)` uses the `--device` default as a device (not an escape),
    so the default moves with a safe fix."""
    root, proc = fix_project("sam_amg", tmp_path)
    assert "fix unsafe" not in proc.stdout, proc.stdout
    amg = (root / "scripts" / "amg.py").read_text(encoding="utf-8")
    assert 'parser.add_argument("--device", type=str, default="npu"' in amg


def test_a_cuda_query_choosing_cuda_only_code_is_left_alone(tmp_path: Path) -> None:
    """Deformable-DETR's setup.py asks `torch.cuda.is_available() and CUDA_HOME` before an
    nvcc build, whisper's `x.is_cuda` before a Triton kernel (imported from a module of the
    package, or through a function of the module): renamed to the NPU, the query would send
    an Ascend machine into nvcc and Triton. Only NPU207 reports them; the device default
    beside them still moves."""
    root, proc = fix_project("cuda_only_branch", tmp_path)
    found = sorted(
        (m.group("path"), m.group("code"))
        for m in map(_FINDING.match, proc.stdout.splitlines())
        if m
    )
    assert found == [
        ("setup.py", "NPU207"),
        ("unsloth/kernels/swiglu.py", "NPU207"),
        ("unsloth/kernels/swiglu.py", "NPU207"),
        ("whisper/triton_ops.py", "NPU207"),
        ("whisper/triton_ops.py", "NPU207"),
    ], proc.stdout
    before = (CORPUS / "cuda_only_branch" / "setup.py").read_text(encoding="utf-8")
    assert (root / "setup.py").read_text(encoding="utf-8") == before
    timing = (root / "whisper" / "timing.py").read_text(encoding="utf-8")
    assert timing.count("if x.is_cuda:") == 2 and 'device="npu"' in timing
    # litgpt's thunder executor: checkers returning "on CUDA?" route tensors to the Triton
    # kernels of `kernels` (a sibling package imported by a plain `import`); they stay
    executor = (root / "unsloth" / "executor.py").read_text(encoding="utf-8")
    assert strings(executor, keep=True) == strings(
        (CORPUS / "cuda_only_branch" / "unsloth" / "executor.py").read_text(encoding="utf-8"), keep=True
    )
    assert executor.count('.type == "cuda"') == 4 and 'device="npu"' in executor


def test_device_types_reaching_modules_aliases_and_f_strings_move(tmp_path: Path) -> None:
    """The files a fix-all left half moved: peft's `getattr(torch, device_type)` fallback
    "cuda", stable-diffusion's `precision_scope("cuda")` (a local name for `autocast`), and
    litgpt's `str(w.device) == f"cuda:{n - 1}"` beside `== "cuda:0"`."""
    root, _proc = fix_project("sd_peft", tmp_path)
    expected = {
        "tracemalloc.py": ['else "npu"', 'device.type in ["npu", "xpu"]'],
        "txt2img.py": ['with precision_scope("npu"):', 'torch.device("npu")'],
        "test_devices.py": ['== "npu:0"', '== f"npu:{device_count - 1}"'],
    }
    for rel, snippets in expected.items():
        text = (root / rel).read_text(encoding="utf-8")
        for snippet in snippets:
            assert snippet in text, (rel, snippet)
