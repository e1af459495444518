"""MS250: (LAX) a `mint` view function's result handed to Python (`.asnumpy()`, `str(...)`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.helpers import GraphRule

# Every row below was measured on MindSpore 2.10 (CPU, LAX): written/lax probes
# `genfresh35_vw_*` / `genfresh35_vx_*` / `genfresh35_pa_*` (fresh v6 seed 12000648).
#: the `mint` functions whose result, read by Python, is refused ("Failed to compile in
#: GRAPH_MODE because the 'Parameter' object's method 'asnumpy' is not supported")
_VIEW_FUNCTIONS: dict[str, str] = {
    "mindspore.mint.permute": "genfresh35_vw_permute_once",
    "mindspore.mint.transpose": "genfresh35_vw_mint_transpose",
    "mindspore.mint.swapaxes": "genfresh35_vx_swapaxes",
    "mindspore.mint.narrow": "genfresh35_vw_mint_narrow",
    "mindspore.mint.select": "genfresh35_vx_select",
    "mindspore.mint.unsqueeze": "genfresh35_vw_mint_unsqueeze",
    "mindspore.mint.broadcast_to": "genfresh35_vx_broadcast_to",
}
#: the same for the items of the tuple these return (`mint.split(x, 1, 0)[0]`, `a, b =
#: mint.chunk(x, 2, 0)`)
_VIEW_TUPLES: dict[str, str] = {
    "mindspore.mint.split": "genfresh35_vx_split_item",
    "mindspore.mint.chunk": "genfresh35_vx_chunk_item",
    "mindspore.mint.unbind": "genfresh35_vx_unbind_item",
}
# measured to compile: `mint.reshape`, `mint.flatten`, `mint.squeeze`, `mint.flip`,
# `mint.tile`, `mint.mul`, the tensor methods `x.permute` / `x.transpose` / `x.view` / `x.T`,
# `ops.transpose`, a slice, and any operation after the view (`mint.permute(x, (1, 0)) *
# 1.0`); of a view, `float(t[0, 0])`, `t[0, 0].item()`, `print(t)`, `repr(t)`, `np.array(t)`
# and `str([t])` compile too. (`mint.t` fails on CPU for another reason: no `TExt` kernel.)
#: what hands the tensor to Python: its methods, and the builtins calling its `__str__`
_PYTHON_METHODS = frozenset({"asnumpy", "tolist"})
_PYTHON_BUILTINS = frozenset({"builtins.str"})
_LAST_NAMES = tuple(sorted({q.rpartition(".")[2] for q in (*_VIEW_FUNCTIONS, *_VIEW_TUPLES)}))
_TUPLE_LAST_NAMES = frozenset(q.rpartition(".")[2] for q in _VIEW_TUPLES)
#: how deep a value is followed through names and the user functions returning it
_DEPTH = 3


@rule(code="MS250", name="mint-view-to-python", severity="error", family="graphmode")
class MintViewToPython(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags `t.asnumpy()`, `t.tolist()` and `str(t)` in
    compiled code when `t` is, on some path, what `mint.permute`, `mint.transpose`,
    `mint.swapaxes`, `mint.narrow`, `mint.select`, `mint.unsqueeze` or `mint.broadcast_to`
    returned, or an item of what `mint.split` / `mint.chunk` / `mint.unbind` returned:
    directly, through a local, or as what a helper, method, sub-cell or `@ms.jit` function
    returns (also from one side of an `if`).

    ## Why is this bad?
    These `mint` functions give a view of their input, and MindSpore 2.10 hands the view
    to JIT Fallback as a graph parameter it cannot read: compiling stops with
    `Failed to compile in GRAPH_MODE because the 'Parameter' object's method 'asnumpy' is
    not supported in 'construct' or function with @jit decorator` (`'__str__'` for
    `str(t)`). Any operation between the view and the read (`mint.permute(x, (1, 0)) *
    1.0`), `mint.reshape` / `mint.flatten` / `mint.squeeze` / `mint.flip` / `mint.tile`,
    the tensor methods `x.permute(...)` / `x.transpose(...)`, and reading the view by
    `float(t[0, 0])`, `.item()`, `print`, `repr` or `np.array` compile. STRICT refuses
    `asnumpy` itself (MS130).

    ## Example
    ```python
    def construct(self, x):
        x = mint.permute(x, (1, 0))
        return x + float(x.asnumpy().sum())
    ```

    ## Use instead
    Read the tensor in the graph (`x.sum()`), or use the tensor method (`x.permute(1, 0)`)
    or an operation before handing it to Python.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (JIT Fallback values in compiled code).
    - Measured on MindSpore 2.10 (CPU): written/lax probes `genfresh35_vw_*`,
      `genfresh35_vx_*`, `genfresh35_pa_*`; fresh v6 seed 12000648 (`mint.permute` twice
      under a tensor `if` in a method, then `x.asnumpy()` in `construct`).
    """

    nodes = (ast.Call,)
    words = _LAST_NAMES

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if ctx.scope is None or ctx.scope.level != "lax" or ctx.function is None:
            return
        read = _python_read(node, ctx)
        if read is None:
            return
        view = _view_source(read, node, ctx.function, ctx, 0)
        if view is None:
            return
        name = (ctx.qualname(view.func) or "").rpartition(".")[2]
        yield ctx.diagnostic(
            self,
            node,
            f"`{ctx.segment(read)}` is what `mint.{name}` returned (line {view.lineno}), a view MindSpore hands to JIT Fallback as a graph parameter: under LAX `{ctx.segment(node)}` fails (\"the 'Parameter' object's method ... is not supported\"); read it in the graph, or use the tensor method (`x.{name}(...)`) or an operation first",
        )


def _python_read(node: ast.Call, ctx: Context) -> ast.expr | None:
    """The tensor `node` hands to Python: `t` of `t.asnumpy()` / `t.tolist()` / `str(t)`."""
    f = node.func
    if type(f) is ast.Attribute and f.attr in _PYTHON_METHODS and not node.args and not node.keywords:
        return f.value
    if type(f) is ast.Name and len(node.args) == 1 and not node.keywords and ctx.qualname(f) in _PYTHON_BUILTINS:
        return node.args[0]
    return None


def _view_source(e: ast.expr, at: ast.AST, func: ast.AST, ctx: Context, depth: int) -> ast.Call | None:
    """The `mint` view call `e` (read at `at`, in `func`) may hold, if any."""
    if depth > _DEPTH:
        return None
    if type(e) is ast.Call:
        if ctx.qualname(e.func) in _VIEW_FUNCTIONS or (type(at) is not ast.Return and ctx.qualname(e.func) in _VIEW_TUPLES and _unpacked(at)):
            return e
        return _returned_view(e, func, ctx, depth + 1)
    if type(e) is ast.Subscript and type(e.value) is ast.Call and ctx.qualname(e.value.func) in _VIEW_TUPLES:
        return e.value  # an item of the views `mint.split` gives
    if type(e) is ast.Tuple:
        return next((v for v in (_view_source(x, at, func, ctx, depth + 1) for x in e.elts) if v is not None), None)
    if type(e) is ast.Name:
        stmt = ctx.statement_of(at)
        if stmt is None:
            return None
        for value, where in _reaching(e.id, func, stmt):
            got = _view_source(value, where, func, ctx, depth + 1)
            if got is not None:
                return got
    return None


def _unpacked(st: ast.AST) -> bool:
    """Is `st` an assignment unpacking its value (`a, b = ...`)?"""
    return type(st) is ast.Assign and any(type(t) in (ast.Tuple, ast.List) for t in st.targets)


def _returned_view(call: ast.Call, func: ast.AST, ctx: Context, depth: int) -> ast.Call | None:
    """A view some `return` of the user function `call` compiles gives back."""
    callee = values(ctx).callee(call, func)
    if callee is None:
        return None
    for n in _own_nodes(callee):
        if type(n) is ast.Return and n.value is not None:
            got = _view_source(n.value, n, callee, ctx, depth)
            if got is not None:
                return got
    return None


def _own_nodes(func: ast.AST) -> Iterable[ast.AST]:
    """The nodes of `func`'s body, not of functions or classes nested in it."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


#: a binding whose value is not followed (a parameter, a loop target, an unpacking)
_OTHER = ast.Constant(value=None)
_Defs = list[tuple[ast.expr, ast.AST]]


def _reaching(name: str, func: ast.AST, use: ast.stmt) -> _Defs:
    """The values (with their statements) of `name`'s bindings that may reach `use` in
    `func`: both sides of an `if`, a loop's body or not."""
    body = getattr(func, "body", None)
    if not isinstance(body, list):
        return []
    got, met = _walk(body, name, use, [])
    return got if met else []


def _walk(body: list[ast.stmt], name: str, use: ast.stmt, defs: _Defs) -> tuple[_Defs, bool]:
    """`defs` after `body`, and whether `use` was met (then `defs` is what reaches it)."""
    for st in body:
        if st is use:
            return defs, True
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if st.name == name:
                defs = [(_OTHER, st)]
            continue
        if isinstance(st, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            start = defs
            if not isinstance(st, (ast.If, ast.While)) and name in {n.id for n in ast.walk(st.target) if type(n) is ast.Name}:
                start = [(_OTHER, st)]
            body_defs, met = _walk(st.body, name, use, start)
            if met:
                return body_defs, True
            if type(st) is not ast.If:
                # a loop binding the name gives the value of its last pass (a `while` on a
                # tensor or a Python counter after `x = self.stage(x)`: `x = x * 1.0` in its
                # body makes `x.asnumpy()` after it compile; fresh v6 seed 12000176)
                body_defs = body_defs if body_defs is not start else defs
            else_defs, met = _walk(st.orelse, name, use, defs if type(st) is ast.If else body_defs)
            if met:
                return else_defs, True
            # an `if` on a tensor: either side reaches (measured, probes `genfresh35_pa_if_*`)
            defs = _union(body_defs, else_defs) if type(st) is ast.If else else_defs
            continue
        blocks = _blocks(st)
        if blocks:
            out = defs
            for block in blocks:  # `with`, `try`: any of the blocks may run last
                got, met = _walk(block, name, use, out)
                if met:
                    return got, True
                out = _union(out, got)
            defs = out
            continue
        bound = _binding(st, name)
        if bound is not None:
            defs = [(bound, st)]
    return defs, False


def _union(a: _Defs, b: _Defs) -> _Defs:
    return a + [d for d in b if not any(d[1] is e[1] for e in a)]


def _blocks(st: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return [st.body]
    if isinstance(st, ast.Try):
        return [st.body, *(h.body for h in st.handlers), st.orelse, st.finalbody]
    return []


def _binding(st: ast.stmt, name: str) -> ast.expr | None:
    """The value `st` binds to `name` (`_OTHER` for a binding not followed), None if none."""
    if type(st) is ast.Assign:
        if any(type(t) is ast.Name and t.id == name for t in st.targets):
            return st.value
        if any(type(n) is ast.Name and n.id == name and isinstance(n.ctx, ast.Store) for t in st.targets for n in ast.walk(t)):
            # unpacked: from the views `a, b = mint.chunk(x, 2, 0)` gives, or not followed
            v = st.value
            return v if type(v) is ast.Call and type(v.func) is ast.Attribute and v.func.attr in _TUPLE_LAST_NAMES else _OTHER
        return None
    if type(st) is ast.AnnAssign and type(st.target) is ast.Name and st.target.id == name:
        return st.value if st.value is not None else _OTHER
    if type(st) is ast.AugAssign and type(st.target) is ast.Name and st.target.id == name:
        return _OTHER
    if isinstance(st, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Delete)):
        return None
    for n in ast.walk(st):
        if type(n) is ast.NamedExpr and n.target.id == name:
            return _OTHER
    return None
