"""Properties of fix-all (`npu_lsp.fixing`, what `check --fix` and the server's fix-all run)
over generated CUDA-era training scripts (`script_gen.py`): each script is checked with every
migration rule, fixed, and the result must

- still compile, and be a fixpoint (fixing again changes nothing);
- have no migration finding left but advisory ones (rules without a fix);
- move every device string and backend name (lines tagged `# dev` / `# backend`) and every
  CUDA API (`# api`), and nothing else: lines tagged `# keep` and untagged lines are
  unchanged, so a "cuda" folder, file name, log message or dict key is never touched;
- never leave a file half moved: the device strings and the CUDA API uses (`.cuda()`,
  `torch.cuda.*`) are either all moved or, when one device string cannot be rewritten
  exactly or the group is unsafe and unsafe fixes are off, none is.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

import pytest
from script_gen import Script, generate

from npu_lsp.config import Config
from npu_lsp.engine import check_source
from npu_lsp.fixing import fix_source
from npu_lsp.registry import load_all

load_all()
CONFIG = Config(select=("NPU",))
#: The mechanical migrations: none of these may remain after fix-all. What may remain is
#: advice without a fix (cuDNN/CUDA backend switches, CUDA-only packages, SDPA, compile).
MECHANICAL = {"NPU201", "NPU202", "NPU203", "NPU204", "NPU205", "NPU206", "NPU209"}
#: All seeds ran from the first run on; the two that failed then (1 and 171) exposed bugs
#: in the generator's own tags, fixed there, not in the rules.
SEEDS = range(300)
_TAG = re.compile(r"#\s*(dev|backend|api|keep)\s*$")


def tag_of(line: str) -> str | None:
    m = _TAG.search(line)
    return m.group(1) if m else None


def body_lines(text: str) -> list[str]:
    """The script's lines without the `import torch_npu` the fixes add."""
    return [line for line in text.splitlines() if line.strip() != "import torch_npu"]


def api_moved(line: str) -> str:
    return line.replace("torch.cuda.", "torch.npu.").replace(".cuda(", ".npu(")


def expected_line(line: str, devices_move: bool) -> str:
    tag = tag_of(line)
    if tag == "backend":
        return line.replace("nccl", "hccl")
    if not devices_move:  # the device strings and the CUDA APIs stay together
        return line
    if tag == "api":
        return api_moved(line)
    if tag == "dev":
        return line.replace("cuda", "npu")
    return line


def literals_by_tag(text: str) -> dict[str | None, Counter[str]]:
    """String literal values (f-strings by their constant parts) per line tag."""
    lines = text.splitlines()
    out: dict[str | None, Counter[str]] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            tag = tag_of(lines[node.lineno - 1])
            out.setdefault(tag, Counter())[node.value] += 1
    return out


def devices_move(script: Script, unsafe: bool) -> bool:
    return script.expect_fixed and (unsafe or not script.unsafe_only)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("seed", SEEDS)
def test_fix_all_on_a_generated_training_script(seed: int, unsafe: bool) -> None:
    script = generate(seed)
    ast.parse(script.text)
    before = check_source(script.text, "train.py", CONFIG)
    assert before, "every generated script has something to migrate"
    outcome = fix_source(script.text, "train.py", CONFIG, unsafe=unsafe)
    fixed = outcome.text

    ast.parse(fixed)
    assert fix_source(fixed, "train.py", CONFIG, unsafe=unsafe).text == fixed
    imports = sum(line.strip() == "import torch_npu" for line in fixed.splitlines())
    assert imports == (1 if fixed != script.text else 0)

    moving = devices_move(script, unsafe)
    original_body, fixed_body = body_lines(script.text), body_lines(fixed)
    assert len(original_body) == len(fixed_body)
    for old, new in zip(original_body, fixed_body, strict=True):
        assert new == expected_line(old, moving), (seed, old)

    # Non-device strings, wherever they sit, are exactly as they were.
    before_literals, after_literals = literals_by_tag(script.text), literals_by_tag(fixed)
    for tag in (None, "keep", "api"):
        assert before_literals.get(tag) == after_literals.get(tag), (seed, tag)

    # Never half moved: all device literals on one side.
    heads = {
        v.split(":")[0]
        for v in after_literals.get("dev", Counter())
        if v[:4] in ("cuda", "npu", "npu:")
    }
    assert len(heads) <= 1, (seed, heads)
    # ... and no `.npu()` / `torch.npu.*` beside a device string kept on CUDA
    if heads == {"cuda"}:
        assert ".npu(" not in fixed and "torch.npu." not in fixed, seed

    left = {d.code for d in outcome.remaining}
    held = {"NPU201", "NPU202", "NPU203", "NPU204", "NPU206"}
    forbidden = MECHANICAL - (held if not moving else set())
    assert not left & forbidden, (seed, sorted(left & forbidden))
    assert all(d.code.startswith("NPU") for d in outcome.remaining)
    # whatever is left has no fix this run could apply
    assert not any(d.fix and (d.fix.safe or unsafe) for d in outcome.remaining), seed


def test_generated_scripts_cover_every_shape() -> None:
    """The seeds exercise each script style and each variant (so the properties bite)."""
    scripts = [generate(seed) for seed in SEEDS]
    texts = "\n".join(s.text for s in scripts)
    for shape in (
        "def main_worker(gpu, ngpus_per_node, args):",
        "class Trainer:",
        "class TrainingArguments:",
        "CONFIG = {",
        "def get_device():",
        "dist.get_backend() ==",
        "f'cuda:{" if "f'cuda:{" in texts else 'f"cuda:{',
        ".format(",
        "% ",
        "choices=",
    ):
        assert shape in texts, shape
    assert any(not s.expect_fixed for s in scripts)
    assert any(s.unsafe_only for s in scripts)
    assert sum(s.expect_fixed and not s.unsafe_only for s in scripts) > len(scripts) // 2
