"""Control-flow questions shared by the branch rules: continuations, bindings, first uses."""

from __future__ import annotations

import ast

from npu_lsp.astutil import child_nodes, walk
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.helpers import FUNCS, returns_in, terminates


def block_of(node: ast.stmt, ctx: Context) -> tuple[ast.AST | None, list[ast.stmt], int]:
    """(parent, the statement list holding `node`, its index)."""
    parent = ctx.parent(node)
    if parent is None:
        return None, [], -1
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if isinstance(block, list):
            for i, st in enumerate(block):
                if st is node:
                    return parent, block, i
    for h in getattr(parent, "handlers", []) or []:
        for i, st in enumerate(h.body):
            if st is node:
                return h, h.body, i
    return parent, [], -1


def continuation_returns(node: ast.If, ctx: Context) -> tuple[list[ast.Return], bool] | None:
    """Returns reached when `node`'s test is false and there is no `else`, plus whether the
    path can fall off the end of the function (an implicit `return None`). None if unknown."""
    parent, block, i = block_of(node, ctx)
    if i < 0:
        return None
    rest = block[i + 1 :]
    rets = returns_in(rest)
    if terminates(rest):
        return rets, False
    if parent is ctx.function:
        return rets, True
    return None


def bindings(stmts: list[ast.stmt]) -> set[str]:
    """Names stored anywhere in `stmts`, not counting nested functions, classes or comprehensions."""
    out: set[str] = set()
    stack: list[ast.AST] = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        elif isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(child_nodes(n))
    return out


def bound_before(func: ast.AST, line: int) -> set[str]:
    """Parameters plus names stored in `func` on lines before `line`."""
    out: set[str] = set()
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments):
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            out.add(a.arg)
        if args.vararg:
            out.add(args.vararg.arg)
        if args.kwarg:
            out.add(args.kwarg.arg)
    body = getattr(func, "body", [])
    stack: list[ast.AST] = list(body) if isinstance(body, list) else []
    while stack:
        n = stack.pop()
        if getattr(n, "lineno", 0) >= line and isinstance(n, ast.stmt):
            # statements starting at/after the line cannot bind before it (compound ones may
            # contain earlier lines only if they start earlier)
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < line:
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            continue
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(child_nodes(n))
    return out


def first_use_after(func: ast.AST, name: str, line: int) -> ast.Name | None:
    """The first occurrence of `name` after `line` in `func`, if it is a read (else None)."""
    best: tuple[int, int, int] | None = None
    best_node: ast.Name | None = None
    for n in walk(func):
        if isinstance(n, ast.Name) and n.id == name and n.lineno > line:
            # on one line a read happens before a store (`y = y + 1`)
            key = (n.lineno, 0 if isinstance(n.ctx, ast.Load) else 1, n.col_offset)
            if best is None or key < best:
                best, best_node = key, n
    if best_node is not None and isinstance(best_node.ctx, ast.Load):
        return best_node
    return None


def is_function(node: ast.AST) -> bool:
    return isinstance(node, FUNCS)
