"""MS168: reading a missing key of a `collections.defaultdict` built in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule

_DEFAULTDICT = "collections.defaultdict"


@rule(code="MS168", name="defaultdict-missing-key", severity="error", family="graphmode")
class DefaultdictMissingKey(GraphRule):
    """## What it does
    Flags a key read (`d["a"]`, `d["a"] += v`, `d["a"].append(v)`) of a
    `collections.defaultdict` built in compiled code, before any assignment of that key.

    ## Why is this bad?
    The graph turns the `defaultdict` into a plain dict and drops its default factory:
    MindSpore 2.10 stops with `ValueError: The key a does not exist in the dict:{}` at every
    syntax level. Assigning the key first (`d["a"] = v`, then reading it) compiles.

    ## Example
    ```python
    def construct(self, box_pred, box_gt):
        losses = defaultdict(float)
        losses["box"] += self.l1(box_pred, box_gt)
        return losses["box"]
    ```

    ## Use instead
    ```python
    def construct(self, box_pred, box_gt):
        losses = {"box": 0.0}
        losses["box"] += self.l1(box_pred, box_gt)
        return losses["box"]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (containers in graph mode); measured on MindSpore 2.10 with the
      probes of the `python` written set (tests/npu_lsp/fixtures/written/python/README.md).
    """

    nodes = (ast.Assign,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Assign)
        func = ctx.function
        if (
            func is None
            or len(node.targets) != 1
            or not isinstance(node.targets[0], ast.Name)
            or not isinstance(node.value, ast.Call)
            or _last_name(node.value.func) != "defaultdict"  # cheap test before resolving
            or ctx.qualname(node.value.func) != _DEFAULTDICT
        ):
            return
        name = node.targets[0].id
        read = _first_missing_read(func, node, name)
        if read is not None:
            key = ctx.segment(read.slice)
            yield ctx.diagnostic(
                self,
                read,
                f"`{name}` is a `defaultdict` built in compiled code, which the graph makes a plain dict: reading the key {key} before assigning it fails to compile (MindSpore: The key ... does not exist in the dict)",
            )


def _first_missing_read(func: ast.AST, made: ast.Assign, name: str) -> ast.Subscript | None:
    """The first `name[<constant>]` read after `made` (in source order, in `func`'s own body)
    whose key no earlier `name[<constant>] = ...` assigned; None when `name` is rebound."""
    events: list[tuple[tuple[int, int], str, ast.Subscript | None, object]] = []
    for n in _own_nodes(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n is not made.targets[0]:
            return None  # rebound: the flow is not a straight line we can follow
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name:
            if not isinstance(n.slice, ast.Constant):
                return None  # a key not known here: no guess
            kind = "store" if isinstance(n.ctx, ast.Store) else "load"
            events.append(((n.lineno, n.col_offset), kind, n, n.slice.value))
    start = (made.lineno, made.col_offset)
    assigned: set[object] = set()
    parents = {id(c): p for p in _own_nodes(func) for c in ast.iter_child_nodes(p)}
    for pos, kind, sub, key in sorted(events, key=lambda e: e[0]):
        if pos < start or sub is None:
            continue
        if kind == "store":
            if isinstance(parents.get(id(sub)), ast.AugAssign):
                if key not in assigned:
                    return sub  # `d[k] += v` reads `d[k]` first
                continue
            assigned.add(key)
        elif key not in assigned:
            return sub
    return None


def _last_name(f: ast.expr) -> str:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _own_nodes(func: ast.AST) -> list[ast.AST]:
    """Nodes of `func` outside nested functions, classes and lambdas."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(getattr(func, "body", []))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out
