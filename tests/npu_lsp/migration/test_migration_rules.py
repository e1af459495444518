"""Migration rules (NPU2xx) against their fixtures, one rule at a time, through the engine.

A fixture holds violations (lines marked `# expect: CODE`) and code the rule must accept side
by side; `<CODE>.fixed.py` is the text after applying every fix the rule offers at once, which
is also how the language server's fix-all action combines them (identical edits merged)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from npu_lsp.config import Config
from npu_lsp.diagnostics import Edit, apply_edits
from npu_lsp.engine import check_source
from npu_lsp.registry import RULES, load_all

load_all()
FIXTURES = Path(__file__).parent / "fixtures"
CODES = sorted(code for code, cls in RULES.items() if cls.family == "migration")
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]+\d+)")


def expectations(text: str) -> set[tuple[int, str]]:
    return {
        (n, m.group(1))
        for n, line in enumerate(text.splitlines(), 1)
        for m in _EXPECT.finditer(line)
    }


def check(code: str, text: str, name: str) -> list:
    return check_source(text, str(FIXTURES / name), Config(select=(code,)))


def fix_all(text: str, diags: list) -> str:
    edits: list[Edit] = []
    for d in diags:
        for edit in d.fix.edits if d.fix else ():
            if edit not in edits:
                edits.append(edit)
    return apply_edits(text, edits)


def test_every_migration_rule_has_a_fixture() -> None:
    assert [f"NPU{n}" for n in range(201, 213)] == CODES
    for code in CODES:
        assert (FIXTURES / f"{code}.py").is_file(), code


@pytest.mark.parametrize("code", CODES)
def test_rule_flags_exactly_the_marked_lines(code: str) -> None:
    text = (FIXTURES / f"{code}.py").read_text(encoding="utf-8")
    diags = check(code, text, f"{code}.py")
    assert {(d.span.line, d.code) for d in diags} == expectations(text)
    assert all(d.severity == RULES[code].severity and d.message for d in diags)


@pytest.mark.parametrize("code", CODES)
def test_fixes_match_the_fixed_fixture(code: str) -> None:
    text = (FIXTURES / f"{code}.py").read_text(encoding="utf-8")
    diags = check(code, text, f"{code}.py")
    fixed_path = FIXTURES / f"{code}.fixed.py"
    if RULES[code].fix_availability == "none":
        assert not any(d.fix for d in diags)
        assert not fixed_path.exists()
        return
    fixed = fix_all(text, diags)
    assert fixed == fixed_path.read_text(encoding="utf-8")
    ast.parse(fixed)
    # What is left afterwards has no fix to offer (the mechanical part is done).
    assert not [d for d in check(code, fixed, f"{code}.fixed.py") if d.fix]


#: Rules whose fixes change numerics (TF32 -> HF32): applied only with --unsafe-fixes.
UNSAFE = {"NPU208", "NPU212"}


@pytest.mark.parametrize("code", [c for c in CODES if RULES[c].fix_availability != "none"])
def test_fixes_are_declared_safe_or_unsafe_as_documented(code: str) -> None:
    text = (FIXTURES / f"{code}.py").read_text(encoding="utf-8")
    fixes = [d.fix for d in check(code, text, f"{code}.py") if d.fix]
    assert fixes
    assert all(f.safe != (code in UNSAFE) for f in fixes)
    assert ("Unsafe" in (RULES[code].__doc__ or "")) == (code in UNSAFE)


def test_clean_module_with_torch_npu_has_no_missing_import() -> None:
    text = (FIXTURES / "NPU209_clean.py").read_text(encoding="utf-8")
    assert check("NPU209", text, "NPU209_clean.py") == []


def test_all_fixes_together_add_torch_npu_once() -> None:
    text = "import torch\nx = torch.ones(1).cuda()\ny = x.to('cuda:0')\nif torch.cuda.is_available():\n    pass\n"
    diags = check_source(text, "train.py", Config(select=("NPU",)))
    assert sorted(d.code for d in diags) == ["NPU201", "NPU202", "NPU204"]
    fixed = fix_all(text, diags)
    assert fixed == (
        "import torch\nimport torch_npu\nx = torch.ones(1).npu()\ny = x.to('npu:0')\n"
        "if torch.npu.is_available():\n    pass\n"
    )
    assert check_source(fixed, "train.py", Config(select=("NPU",))) == []


def test_import_is_added_on_its_own_line_without_final_newline_and_with_crlf() -> None:
    no_newline = check_source("import torch\nx = y.cuda()", "a.py", Config(select=("NPU201",)))
    assert (
        fix_all("import torch\nx = y.cuda()", no_newline)
        == "import torch\nimport torch_npu\nx = y.npu()"
    )
    only_import = "import torch"
    crlf = "import torch\r\nx = y.cuda()\r\n"
    diags = check_source(crlf, "b.py", Config(select=("NPU201",)))
    assert fix_all(crlf, diags) == "import torch\r\nimport torch_npu\r\nx = y.npu()\r\n"
    assert check_source(only_import, "c.py", Config(select=("NPU",))) == []


def test_without_top_level_import_torch_the_import_goes_where_torch_is_imported() -> None:
    text = "def f(x):\n    import torch\n    return x.cuda()\n"
    diags = check_source(text, "d.py", Config(select=("NPU201",)))
    assert fix_all(text, diags) == (
        "def f(x):\n    import torch\n    import torch_npu\n    return x.npu()\n"
    )
    guarded = "try:\n    import torch\nexcept ImportError:\n    torch = None\nx = y.cuda()\n"
    diags = check_source(guarded, "g.py", Config(select=("NPU201",)))
    assert fix_all(guarded, diags) == guarded.replace(
        "import torch\n", "import torch\n    import torch_npu\n"
    ).replace(".cuda()", ".npu()")
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n"
    typed += "def f():\n    import torch\n    return torch.ones(1).cuda()\n"
    diags = check_source(typed, "h.py", Config(select=("NPU201",)))
    assert fix_all(typed, diags) == typed.replace(
        "    import torch\n    return", "    import torch\n    import torch_npu\n    return"
    ).replace(".cuda()", ".npu()")


def test_noqa_suppresses_a_migration_finding() -> None:
    text = "import torch\nx = y.cuda()  # noqa: NPU201\nz = y.cuda()  # noqa: NPU2\n"
    assert check_source(text, "e.py", Config(select=("NPU",))) == []


@pytest.mark.parametrize("module", ["triton", "cupy", "xformers.ops", "flash_attn"])
def test_cuda_only_package_alone_in_a_file_is_found(module: str) -> None:
    diags = check_source(f"import {module}\n", "k.py", Config(select=("NPU",)))
    assert [(d.code, d.span.line) for d in diags] == [("NPU207", 1)]


def test_columns_count_characters_on_non_ascii_lines() -> None:
    # ast records UTF-8 byte offsets; spans and edits must be in characters.
    text = 'import torch\nnote = "é😀"; x = y.cuda(); d = torch.device("cuda")\n'
    diags = check_source(text, "u.py", Config(select=("NPU",)))
    line = text.splitlines()[1]
    assert [(d.code, d.span.column) for d in diags] == [
        ("NPU201", line.index("cuda()") + 1),
        ("NPU203", line.index('"cuda"') + 1),
    ]
    assert fix_all(text, diags) == (
        'import torch\nimport torch_npu\nnote = "é😀"; x = y.npu(); d = torch.device("npu")\n'
    )


def test_torch_imported_inside_a_function_or_try_counts() -> None:
    text = 'try:\n    import torch\nexcept ImportError:\n    torch = None\nx = y.to("cuda")\n'
    assert [d.code for d in check_source(text, "t.py", Config(select=("NPU",)))] == ["NPU204"]


def test_import_torch_in_a_docstring_does_not_make_torch_code() -> None:
    text = '"""Usage:\n\nimport torch\n"""\nx = y.to("cuda")\nz = w.cuda()\n'
    assert check_source(text, "t.py", Config(select=("NPU",))) == []


@pytest.mark.parametrize(
    ("use", "flagged"),
    [
        ("x = t.npu()", True),
        ('x = t.to("npu")', True),
        ('x = torch.ones(2, device="npu:1")', True),
        ('d = torch.device("npu")', True),
        ("ok = torch.npu.is_available()", True),
        ('name = "npu"', False),
        ("flag = cfg.npu", False),
        ('table = {"npu": 1}', False),
    ],
)
def test_npu209_only_for_real_npu_uses(use: str, flagged: bool) -> None:
    text = f"import torch\n{use}\n"
    diags = check_source(text, "n.py", Config(select=("NPU209",)))
    assert [(d.code, d.span.line) for d in diags] == ([("NPU209", 2)] if flagged else [])


def test_npu209_needs_torch_itself() -> None:
    # an apex-only module has no `import torch` to pair torch_npu with
    assert check_source("import apex\nx = t.npu()\n", "a.py", Config(select=("NPU209",))) == []


def test_torch_imported_in_an_except_handler_before_an_else_block_counts() -> None:
    text = (
        "try:\n    import jax\nexcept ImportError:\n    import torch\nelse:\n    pass\n"
        'x = y.to("cuda")\n'
    )
    assert [d.code for d in check_source(text, "t.py", Config(select=("NPU",)))] == ["NPU204"]


CUDA_ONLY_BRANCHES = {
    # a CUDA query choosing code with no Ascend build: left alone
    "nvcc build": (
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "if torch.cuda.is_available():\n    ext = CUDAExtension('k', ['k.cu'])\n",
        False,
    ),
    "triton kernel": (
        "def f(x):\n    if x.is_cuda:\n        import triton\n        return triton\n    return x\n",
        False,
    ),
    "conditional expression": (
        "import cupy\ny = cupy.asarray(x) if torch.cuda.is_available() else x\n",
        False,
    ),
    # Apex is replaced on Ascend (torch_npu's AMP and fused optimizers): still migrated
    "apex": (
        "if torch.cuda.is_available():\n    from apex import amp\n    model = model.cuda()\n",
        True,
    ),
    # the GPU path of the program (it moves data with .cuda()) beside a kernel: migrated
    "kernel beside placement": (
        "if torch.cuda.is_available():\n    import triton\n    model = model.cuda()\n",
        True,
    ),
    # a CUDA query choosing ordinary code: migrated
    "plain branch": ("if torch.cuda.is_available():\n    model = model.cuda()\n", True),
    # CUDA-only code whose test is no CUDA query: migrated
    "no query": ("if use_kernels:\n    import triton\n    model = model.cuda()\n", True),
}


@pytest.mark.parametrize(
    "body, migrated", CUDA_ONLY_BRANCHES.values(), ids=CUDA_ONLY_BRANCHES.keys()
)
def test_a_cuda_query_choosing_cuda_only_code_is_left_alone(body: str, migrated: bool) -> None:
    text = "import torch\n" + body
    config = Config(select=("NPU201", "NPU202"))
    codes = [d.code for d in check_source(text, "t.py", config)]
    assert bool(codes) is migrated, codes
