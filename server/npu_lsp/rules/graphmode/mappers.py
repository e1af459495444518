"""MindSpore's multitype mappers in compiled code: `ops.HyperMap` / `ops.Map` and Python's `map`.

`mapper_of(call.func, func, ctx)` names the mapper a call runs: ("HyperMap" | "Map", fixed),
`fixed` when the mapper was built with its function (`HyperMap(fn)`: every argument of the
call is a mapped sequence; else the first argument is the function). Python's own `map` is
compiled as the Map operator (measured: fixtures/written/trainsteps/probes/mh_map_builtin_*).
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.flow import analyzer

_CLASSES = frozenset({"HyperMap", "Map"})


def mapper_class(q: str | None) -> str | None:
    """"HyperMap"/"Map" for the qualified name of one of those classes of mindspore.ops."""
    if not q or not q.startswith("mindspore.ops."):
        return None
    last = q.rpartition(".")[2]
    return last if last in _CLASSES else None


def _built(value: ast.expr | None, ctx: Context) -> tuple[str, bool] | None:
    """The mapper a constructor call builds, and whether it fixes the mapped function."""
    if not isinstance(value, ast.Call):
        return None
    cls = mapper_class(ctx.qualname(value.func))
    if cls is None:
        return None
    fixed = bool(value.args) and not (isinstance(value.args[0], ast.Constant) and value.args[0].value is None)
    fixed = fixed or any(k.arg == "ops" and not (isinstance(k.value, ast.Constant) and k.value.value is None) for k in value.keywords)
    return cls, fixed


def mapper_of(f: ast.expr, func: ast.AST | None, ctx: Context) -> tuple[str, bool] | None:
    """The mapper `f(...)` runs inside the compiled function `func`, if it is one."""
    if isinstance(f, ast.Call):  # `ops.HyperMap()(fn, xs)`
        return _built(f, ctx)
    if isinstance(f, ast.Name):
        if f.id == "map" and ctx.qualname(f) in (None, "builtins.map", "map"):
            local = constructed.built(f, func, ctx)
            return ("Map", False) if local is None else _built(local, ctx)
        return _built(constructed.built(f, func, ctx), ctx)
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(func)
        if cls is None:
            return None
        values = a.self_values(cls).get(f.attr, [])
        return _built(values[0], ctx) if len(values) == 1 else None
    return None
