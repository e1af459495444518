"""NPU211: `torch.compile` without an explicit backend."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.migration.helpers import span_of
from npu_lsp.rules.migration.values import Flow, resolve


@rule(code="NPU211", name="torch-compile-default-backend", severity="info", family="migration")
class TorchCompileDefaultBackend(Rule):
    """## What it does
    Finds `torch.compile(...)` calls (and `@torch.compile` decorators) that do not name a
    `backend`.

    ## Why is this bad?
    The default backend, Inductor, generates Triton kernels for GPUs. On Ascend, graph
    compilation goes through the NPU backend that `torch_npu` registers, and it has to be
    asked for by name on the versions that support it.

    ## Example
    ```python
    model = torch.compile(model)
    ```

    ## Use instead
    ```python
    model = torch.compile(model, backend="npu")
    ```

    ## Fix safety
    No fix: which backends exist depends on the installed torch_npu version.

    ## References
    - `../shared/reference/migration.md`, "PyTorch code: what changes on Ascend"
    """

    nodes = (ast.Module,)
    triggers = ("compile",)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        flow = Flow.of(ctx)
        index = flow.b.nodes
        imported = set(ctx.scopes.info.imports)
        imported.update(n for local in flow.b.local_imports.values() for n in local)
        for call in index.get(ast.Call, []):
            func = call.func  # type: ignore[attr-defined]
            if (isinstance(func, ast.Attribute) and func.attr == "compile") or (
                isinstance(func, ast.Name) and func.id in imported
            ):  # `torch.compile`, or an imported alias of it
                yield from self._check_node(call, ctx)
        for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            for found in index.get(kind, []):
                if found.decorator_list:  # type: ignore[attr-defined]
                    yield from self._check_node(found, ctx)

    def _check_node(self, node: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        if isinstance(node, ast.Call):
            if resolve(ctx, node.func) == "torch.compile" and not any(
                k.arg == "backend" for k in node.keywords
            ):
                yield self._report(ctx, node.func)
            return
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for decorator in node.decorator_list:
            # A bare `@torch.compile`; `@torch.compile(...)` is a Call and handled above.
            if not isinstance(decorator, ast.Call) and resolve(ctx, decorator) == "torch.compile":
                yield self._report(ctx, decorator)

    def _report(self, ctx: Context, where: ast.AST) -> Diagnostic:
        return ctx.diagnostic(
            self,
            span_of(ctx, where),
            '`torch.compile` without `backend=` uses Inductor (GPU); pass `backend="npu"` on Ascend',
        )
