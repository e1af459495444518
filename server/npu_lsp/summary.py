"""Portable module summaries: what cross-file scope resolution reads of a module, no tree.

A `ModuleInfo` built by `scope.summarize` points into its file's syntax tree (functions,
classes). Keeping that for every module of a repository keeps every tree alive, and a tree
cannot be sent between processes cheaply. `portable(info)` returns the same summary with
each function and class replaced by a *pruned copy*: the node itself (name, position,
decorators, bases) with only the parts of its body that resolution reads, that is the
calls (with their callee expression and position), `x = f(...)` assignments, nested
definitions and `return name` statements, in their original order and nesting. Everything
else (expressions without calls, control flow without calls, constants) is dropped.

Resolution over pruned copies gives the same graph scopes as over the trees: the scans
(`astutil.find_branches`, `scope._returned_function`) meet the same nodes in the same
order, because a subtree is dropped only when it holds none of them. The result pickles
small (it crosses process boundaries and goes into the cache).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from npu_lsp.astutil import FIELDS, fields
from npu_lsp.columns import LineColumns
from npu_lsp.scope import ClassInfo, FuncDef, ModuleInfo

#: Nodes resolution looks for inside function bodies (kept with their position).
_KEPT = (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Return)
#: Fields kept whole on a kept node: what resolution reads of it directly.
_WHOLE: dict[type, frozenset[str]] = {
    ast.Call: frozenset({"func"}),  # whole: the callee expression
    ast.FunctionDef: frozenset({"name", "decorator_list"}),
    ast.AsyncFunctionDef: frozenset({"name", "decorator_list"}),
    ast.ClassDef: frozenset({"name", "bases", "decorator_list"}),
    ast.Return: frozenset({"value"}),
}
_KEPT_SET = frozenset(_KEPT)
_POSITION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_DEFINITIONS = _FUNCTIONS | {ast.ClassDef}
_EMPTY_ARGS = ast.arguments(
    posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
)


class _Pruner:
    """Copies definitions keeping what resolution reads; one copy per original node, so a
    nested function listed both in its parent's body and in `ModuleInfo.functions` stays
    one object (resolution tells functions apart by identity)."""

    def __init__(self) -> None:
        self.memo: dict[int, ast.AST] = {}

    def definition(self, node: FuncDef | ast.ClassDef) -> Any:
        out = self.prune(node, top=True)
        assert out is not None
        return out

    def prune(self, node: ast.AST, top: bool = False) -> ast.AST | None:
        """A pruned copy of `node`, or None when nothing under it matters."""
        key = id(node)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        t = type(node)
        if t is ast.Assign:
            return self._assign(node)  # type: ignore[arg-type]
        if t is ast.Return and type(node.value) is not ast.Name:  # type: ignore[attr-defined]
            return self.prune(node.value) if node.value is not None else None  # type: ignore[attr-defined]
        kept = top or t in _KEPT_SET
        whole = _WHOLE.get(t, frozenset())
        values: dict[str, Any] = {}
        found = kept
        for name in FIELDS.get(t) or fields(t):
            value = getattr(node, name, None)
            if name in whole:
                values[name] = value
            elif isinstance(value, list):
                items = [p for v in value if isinstance(v, ast.AST) and (p := self.prune(v))]
                values[name] = items
                found = found or bool(items)
            elif isinstance(value, ast.AST):
                values[name] = self.prune(value)
                found = found or values[name] is not None
            else:
                values[name] = value if kept else None
        if not found:
            return None
        copy = t.__new__(t)
        for name, value in values.items():
            if value is None and name == "args" and t in _FUNCTIONS:
                value = _EMPTY_ARGS
            setattr(copy, name, value)
        if kept:  # containers need no position: nothing reads it
            for attr in _POSITION:
                if hasattr(node, attr):
                    setattr(copy, attr, getattr(node, attr))
        if t in _DEFINITIONS:
            self.memo[key] = copy
        return copy

    def _assign(self, node: ast.Assign) -> ast.AST | None:
        """`x = f(...)` gives `x` a type (`scope._note_local_type`): kept with its name
        targets; any other assignment matters only for the calls inside it."""
        value = self.prune(node.value)
        names = [t for t in node.targets if type(t) is ast.Name]
        if names and type(node.value) is ast.Call:
            copy = ast.Assign(targets=names, value=value, type_comment=None)
            for attr in _POSITION:
                setattr(copy, attr, getattr(node, attr))
            return copy
        targets = [p for t in node.targets if (p := self.prune(t))]
        if value is None and not targets:
            return None
        return ast.Expr(value=ast.Tuple(elts=[*targets, *([value] if value else [])]))


def portable(info: ModuleInfo, text: str | None = None) -> ModuleInfo:
    """`info` with pruned copies instead of tree nodes (see the module docstring). With the
    file's `text`, the column converter keeps only the lines of kept calls."""
    pr = _Pruner()
    functions = {name: pr.definition(fn) for name, fn in info.functions.items()}
    classes: dict[str, ClassInfo] = {}
    for name, cls in info.classes.items():
        node = pr.definition(cls.node)
        methods = {m: pr.definition(fn) for m, fn in cls.methods.items()}
        classes[name] = ClassInfo(
            cls.name, node, list(cls.bases), methods, cls.jit_class, dict(cls.attr_types)
        )
    columns = info.columns
    if columns is not None and text is not None and not text.isascii():
        columns = LineColumns.restricted(text, _call_lines([*functions.values(), *classes.values()]))
    elif columns is not None:
        columns = LineColumns("")
    return replace(info, functions=functions, classes=classes, columns=columns)


def _call_lines(defs: list[Any]) -> list[int]:
    """Lines where kept calls start or end (the only positions resolution converts)."""
    lines: set[int] = set()
    for d in defs:
        for node in ast.walk(d.node if isinstance(d, ClassInfo) else d):
            if type(node) is ast.Call:
                lines.add(node.lineno)
                lines.add(node.end_lineno or node.lineno)
    return sorted(lines)
