"""Which cell classes of a file are compiled inside another graph, not as the top cell.

A network called as `net(x)` in GRAPH_MODE is the top of its graph. The same network read
by an `@ms.jit` function (`model` a module-level instance), or given to a grad builder
(`ms.value_and_grad(forward_fn, ...)`, `ms.grad`) or to `nn.TrainOneStepCell`, is compiled
as a part of that other graph, where some programs the top cell compiles fail: an attribute
one call of a sub-cell creates on `self` and another call reads ("The pointer[seq_abs] is
null" at LAX; written/heldout34c probes `fix35h_rv_*`: `model(bx)` in GRAPH_MODE compiles,
the same forward in an `@ms.jit` function, under `value_and_grad` or `ms.grad` fails).

`inner_classes(ctx)` answers per file (cached): the names of the classes of this file with
an instance so reached, and their sub-cells. Only what the file shows: module-level
instances (`model = Model(...)`) and functions of this file (followed three calls deep).
"""

from __future__ import annotations

import ast

from npu_lsp.engine import Context

#: grad builders and training wrappers that compile what they are given inside their graph
_BUILDERS = frozenset({
    "mindspore.grad", "mindspore.value_and_grad", "mindspore.ops.grad", "mindspore.ops.value_and_grad",
    "mindspore.nn.TrainOneStepCell", "mindspore.nn.TrainOneStepWithLossScaleCell",
})
#: how deep functions calling functions of the file are followed from a builder
_DEPTH = 3
#: the decorator compiling a function as its own graph
_JIT = frozenset({"mindspore.jit"})
_KEY = "inner_cells.classes"


def inner_classes(ctx: Context) -> frozenset[str]:
    """Names of this file's classes an instance of which a grad builder, a training wrapper
    or an `@ms.jit` function of the file compiles inside its own graph."""
    hit: frozenset[str] | None = ctx.cache.get(_KEY)
    if hit is None:
        text = ctx.text
        hit = ctx.cache[_KEY] = _classes(ctx) if ("grad" in text or "TrainOneStep" in text or "jit" in text) else frozenset()
    return hit


def _classes(ctx: Context) -> frozenset[str]:
    names: set[str] = set()
    jitted: list[ast.FunctionDef] = []
    loaded: set[str] = set()
    for n in ast.walk(ctx.tree):
        if type(n) is ast.Name:
            if type(n.ctx) is ast.Load:
                loaded.add(n.id)
        elif type(n) is ast.Call and n.args and ctx.qualname(n.func) in _BUILDERS:
            names |= _reached_names(n.args[0], ctx)
        elif type(n) is ast.FunctionDef and any(_is_jit(d, ctx) for d in n.decorator_list):
            jitted.append(n)
    for f in jitted:
        # a jit function nobody calls compiles nothing (probe `fix35h_rv_fwd_graph_cell`)
        if f.name in loaded:
            for st in f.body:
                names |= _reached_names(st, ctx)
    if not names:
        return frozenset()
    info = ctx.scopes.info
    bindings = ctx.module_bindings()
    found: set[str] = set()
    for name in names:
        for b in bindings.get(name, ()):
            if type(b) is ast.Assign and type(b.value) is ast.Call:
                cls = _class_name(b.value.func)
                if cls in info.classes:
                    found.add(cls)
    # the sub-cells `__init__` gives them, transitively
    todo = list(found)
    while todo:
        cinfo = info.classes.get(todo.pop())
        for target in cinfo.attr_types.values() if cinfo is not None else ():
            mod, _, cls = target.rpartition(".")
            if mod == info.module and cls in info.classes and cls not in found:
                found.add(cls)
                todo.append(cls)
    return frozenset(found)


def _reached_names(e: ast.AST, ctx: Context) -> set[str]:
    """Module-level names the compiled value `e` reads: the names in it, and those a
    function of this file it names reads (followed `_DEPTH` deep)."""
    defs = {d.name: d for d in ctx.tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out: set[str] = set()
    todo: list[tuple[ast.AST, int]] = [(e, 0)]
    seen: set[str] = set()
    while todo:
        node, depth = todo.pop()
        for n in ast.walk(node):
            if type(n) is not ast.Name or n.id in seen:
                continue
            seen.add(n.id)
            d = defs.get(n.id)
            if d is None:
                out.add(n.id)
            elif depth < _DEPTH:
                todo.extend((st, depth + 1) for st in d.body)
    return out


def _is_jit(d: ast.expr, ctx: Context) -> bool:
    return ctx.qualname(d.func if type(d) is ast.Call else d) in _JIT


def _class_name(f: ast.expr) -> str | None:
    if type(f) is ast.Name:
        return f.id
    return None
