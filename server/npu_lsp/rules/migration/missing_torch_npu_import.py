"""NPU209: NPU APIs used without `import torch_npu`."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic, Fix
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.dispatch import npu_guarded
from npu_lsp.rules.migration.helpers import imports_torch_npu, span_of, torch_npu_import_edit
from npu_lsp.rules.migration.values import Flow, resolve

_DEVICE_KEYWORDS = frozenset({"device", "device_type", "map_location"})
_NPU_WORD = re.compile(r"\bnpu\b")


def _npu_device(node: ast.AST) -> bool:
    """The string literal "npu" or "npu:N"."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return False
    value = node.value
    return value == "npu" or (value.startswith("npu:") and value[4:].isdigit())


def first_npu_use(tree: ast.Module, ctx: Context) -> ast.AST | None:
    """The first expression that needs torch_npu, in source order: a `.npu()` call, anything
    under `torch.npu`, or an "npu" device string where a device goes (`.to("npu")`,
    `device="npu:0"`, `torch.device("npu")`). A bare "npu" string elsewhere (a backend
    name, a dictionary key) or an unrelated `.npu` attribute does not count."""
    found: list[ast.expr] = []
    index = Flow.of(ctx).b.nodes
    for node in [*index.get(ast.Attribute, []), *index.get(ast.Call, [])]:
        if isinstance(node, ast.Attribute):
            if resolve(ctx, node.value) == "torch.npu" or resolve(ctx, node) == "torch.npu":
                found.append(node)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "npu":
                if resolve(ctx, func) in (None, "torch.npu"):
                    found.append(func)
                continue
            device_call = (isinstance(func, ast.Attribute) and func.attr == "to") or resolve(
                ctx, func
            ) == "torch.device"
            if device_call and node.args and _npu_device(node.args[0]):
                found.append(node.args[0])
            found.extend(
                kw.value
                for kw in node.keywords
                if kw.arg in _DEVICE_KEYWORDS and _npu_device(kw.value)
            )
    found = [n for n in found if not npu_guarded(ctx, n)]
    if not found:
        return None
    return min(found, key=lambda n: (n.lineno, n.col_offset))


@rule(
    code="NPU209",
    name="missing-torch-npu-import",
    severity="warning",
    family="migration",
    fix="sometimes",
)
class MissingTorchNpuImport(Rule):
    """## What it does
    Reports a module that imports `torch` and uses NPU features (`.npu()`, `torch.npu.*`, or an
    `"npu"` device string passed where a device goes) but never imports `torch_npu`. Uses
    reached only once a test has shown torch_npu loaded (the branch of
    `if is_npu_available():`, `if device.type == "npu":`, a test that does not itself read
    `torch.npu`) or inside a class's own `npu()` method do not count: device-generic code
    imports torch_npu where it checks for it, and a top-level import would break it where
    torch_npu is not installed.

    ## Why is this bad?
    `torch_npu` registers the NPU backend when it is imported. Without the import,
    `tensor.npu()` raises `AttributeError`, `torch.npu` does not exist and `"npu"` is an unknown
    device type.

    ## Example
    ```python
    import torch

    x = torch.ones(4).npu()
    ```

    ## Use instead
    ```python
    import torch
    import torch_npu

    x = torch.ones(4).npu()
    ```

    ## Fix safety
    Safe: `import torch_npu` is inserted after the first import of torch (`import torch`,
    `import torch.nn as nn`, `from torch import nn`...), at its indentation: a top-level one
    if there is one, else one inside a top-level `try`/`if`/`with` block, else one inside a
    function. Offered only when such an import starts its own line.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    #: torch_npu only matters to code that imports torch (an apex-only or torch_npu-only
    #: file has nothing to add the import to)
    requires_imports = ("torch",)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        assert isinstance(node, ast.Module)
        if _NPU_WORD.search(ctx.text) is None or imports_torch_npu(node, ctx.text):
            return  # ("npu" as a word: "input" does not count)
        use = first_npu_use(node, ctx)
        if use is None:
            return
        edit = torch_npu_import_edit(ctx)
        fix = Fix("Add `import torch_npu`", (edit,)) if edit else None
        yield ctx.diagnostic(
            self, span_of(ctx, use), "NPU API used but `torch_npu` is never imported", fix=fix
        )
