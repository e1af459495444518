"""MS249: `ops.cat(ops.unstack(ops.stack([a, b], k), k))`: the unstacked stack of a list is a list."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.constructed import built
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

# Every row below was measured on MindSpore 2.10 (CPU, LAX and STRICT): written set
# heldout34b, probes `fix34d_unstack_*` / `fix34d_unbind_*`, and heldout13b's `unbind_*`.
#: the operations that refuse the list ("tensors's type 'List[...]' does not match expected
#: type 'tuple of Tensor'"), the function spellings, with the index and keyword of the tensors
_REFUSING_FUNCTIONS: dict[str, tuple[int, str]] = {
    "mindspore.ops.cat": (0, "tensors"),  # fix34d_unstack_stack_list_cat
    "mindspore.ops.concat": (0, "tensors"),  # fix34d_unstack_stack_list_concat
    "mindspore.mint.cat": (0, "tensors"),  # fix34d_unstack_stack_list_mint_cat
    "mindspore.ops.addn": (0, "x"),  # fix34d_unstack_stack_list_addn
}
#: the same as primitives built and called at once (`ops.Concat(0)(parts)`)
_REFUSING_PRIMITIVES = frozenset({"mindspore.ops.Concat"})  # fix34d_unstack_stack_list_prim
#: what `Rule.calls` matches: the functions' last names, "" for a primitive built in place
_CALLED = frozenset({q.rpartition(".")[2] for q in _REFUSING_FUNCTIONS} | {""})
#: the unstacking functions, with the index and keyword of the axis and its default
_UNSTACKS: dict[str, tuple[int, str]] = {
    "mindspore.ops.unstack": (1, "axis"),  # fix34d_unstack_stack_list_cat
    "mindspore.ops.unbind": (1, "dim"),  # fix34d_unbind_stack_list_cat
}
#: `ops.stack(tensors, axis=0)`; `ops.Stack(axis)(tensors)` and `ops.Unstack(axis)(x)`
_STACK = "mindspore.ops.stack"
_STACK_PRIMITIVE = "mindspore.ops.Stack"
_UNSTACK_PRIMITIVE = "mindspore.ops.Unstack"


@rule(code="MS249", name="unstacked-list-to-concat", severity="error", family="graphmode")
class UnstackedListToConcat(GraphRule):
    """## What it does
    Flags `ops.cat` / `ops.concat` / `mint.cat` / `ops.Concat(axis)` / `ops.addn` given
    what `ops.unstack` / `ops.unbind` / `x.unbind(...)` / `ops.Unstack(axis)` split back
    out of an `ops.stack` of a Python *list* (a list display, a comprehension, or a local
    bound once to one) along the same axis:
    `ops.cat(ops.unstack(ops.stack([f1, f2], 1), 1), 0)` (SupCon's `contrast_feature`),
    also through a local or `tuple(...)`.

    ## Why is this bad?
    MindSpore 2.10 folds `unstack(stack(list, k), k)` back into the list itself before it
    checks the operation's inputs, and `Concat` / `AddN` take a tuple only: compiling stops
    at every syntax level with `For Operator[Concat], tensors's type
    'List[Tensor[Float32]*2]' does not match expected type 'tuple of Tensor'`. The same
    with a tuple given to `ops.stack`, unstacking along another axis, an operation between
    the two (`ops.stack(...) * 2`), `ops.split` / `ops.chunk` instead of unstacking,
    indexing the result (`u[0] + u[1]`), `ops.stack` of the result, or an input tensor
    unstacked all compile.

    ## Example
    ```python
    features = ops.stack([f1, f2], axis=1)
    contrast = ops.cat(ops.unstack(features, axis=1), axis=0)
    ```

    ## Use instead
    Stack a tuple, or concatenate the views directly:
    ```python
    features = ops.stack((f1, f2), axis=1)
    contrast = ops.cat(ops.unstack(features, axis=1), axis=0)
    # or: contrast = ops.cat((f1, f2), axis=0)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout34b`
      (`supcon_unstack_views_labels_none_clean`, `r2_supcon_stack_list_then_unstack_cat`),
      its probes `fix34d_unstack_*` / `fix34d_unbind_*` / `fix34d_split_*` /
      `fix34d_chunk_*`, and `heldout13b` (`r2_port_torch_chunk_unbind_loop`, probes
      `unbind_*`).
    - Across helpers (probes `fix34d_unstack_in_helper`, `fix35a_unstack_helper_*`, both
      levels): the stacked tensor given to a helper method that unstacks and concatenates
      it, a list given to a helper that stacks, unstacks and concatenates it, and a
      helper's returned `ops.stack` of a list are refused; a tuple stacked or another axis
      compile. The checker follows a parameter into the helper's only call site and a call
      into the helper's only `return`.
    """

    nodes = (ast.Call,)
    words = ("stack",)
    calls = _CALLED

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        refusing = _refusing_operation(node, ctx)
        if refusing is None:
            return ()
        given, name = refusing
        if given is None or not _unstacked_list(given, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{name}` is given what `unstack` splits back out of an `ops.stack` of a Python list along the same axis: MindSpore 2.10 folds the pair back into the list and stops with \"For Operator[{_operator(name)}], ...'s type 'List[Tensor]' does not match expected type 'tuple of Tensor'\"; stack a tuple (`ops.stack((a, b), k)`) or concatenate the tensors directly",
            )
        ]


def _refusing_operation(call: ast.Call, ctx: Context) -> tuple[ast.expr | None, str] | None:
    """(the tensors argument, the operation's name) when `call` is an operation refusing a
    list; None otherwise."""
    f = call.func
    if type(f) is ast.Call:
        q = ctx.qualname(f.func) or ""
        if q not in _REFUSING_PRIMITIVES:
            return None
        return (call.args[0] if len(call.args) == 1 and not call.keywords else None), q.rpartition(
            "."
        )[2]
    q = ctx.qualname(f) or ""
    where = _REFUSING_FUNCTIONS.get(q)
    if where is None:
        return None
    return _argument(call, *where), q.replace("mindspore.", "", 1)


def _operator(name: str) -> str:
    return "AddN" if name.endswith("addn") else "Concat"


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """The argument given at `index` or by `keyword`; None when a star hides it."""
    if _starred(call):
        return None
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    return call.args[index] if index < len(call.args) else None


def _unstacked_list(e: ast.expr, ctx: Context) -> bool:
    """Is `e` (through `tuple(...)` and locals bound once) an unstacking of an `ops.stack`
    of a Python list along the stack's own axis?"""
    e = _followed(e, ctx)
    if (
        type(e) is ast.Call
        and type(e.func) is ast.Name
        and ctx.qualname(e.func) == "builtins.tuple"
        and len(e.args) == 1
    ):
        e = _followed(
            e.args[0], ctx
        )  # `tuple(...)` of the folded list: still refused (fix34d_unstack_stack_list_tuple_wrap)
    unstacked = _unstacking(e, ctx)
    if unstacked is None:
        return False
    source, axis = unstacked
    if axis is None:
        return False
    # the stacked tensor and its items may come from the caller of this helper, or from a
    # helper it calls (fix34d_unstack_in_helper, probes fix35a_unstack_helper_*)
    source, where = _traced(source, ctx.function, ctx)
    stacked = _stacking(source, ctx)
    if stacked is None:
        return False
    items, stack_axis = stacked
    return axis == stack_axis and _is_list(_traced(items, where, ctx)[0])


def _traced(e: ast.expr, func: ast.AST | None, ctx: Context) -> tuple[ast.expr, ast.AST | None]:
    """`e` (read in `func`) followed through locals bound once, into the one call site of
    `func` when it names a parameter of it, and into the one `return` of a helper it calls
    (`self.pair(a, b)`); with the function the result is read in."""
    for _ in range(_TRACE_DEPTH):
        if type(e) is ast.Name:
            if isinstance(func, ast.FunctionDef) and e.id in _parameters(func):
                passed = _sole_argument(e.id, func, ctx)
                if passed is None:
                    return e, func
                e, func = passed
                continue
            value = built(e, func, ctx)
            if value is None:
                return e, func
            e = value
            continue
        if type(e) is ast.Call:
            callee = _helper(e, func, ctx)
            returned = _sole_return(callee) if callee is not None else None
            if returned is None:
                return e, func
            e, func = returned, callee
            continue
        return e, func
    return e, func


_TRACE_DEPTH = 4


def _parameters(func: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*func.args.posonlyargs, *func.args.args)]


def _sole_argument(name: str, func: ast.FunctionDef, ctx: Context) -> tuple[ast.expr, ast.AST | None] | None:
    """What the only call of `func` in the file (`self.merge(x)` from a method of its class,
    `merge(x)` of a module function) gives its parameter `name`, with the calling function."""
    a = analyzer(ctx)
    cls = a.owner_class(func)
    if cls is not None and ctx.parent(func) is not cls:
        return None
    params = _parameters(func)
    if cls is not None:
        params = params[1:]
    if name not in params or a.rebinds(name, func):
        return None
    index = params.index(name)
    found: list[ast.Call] = []
    for n in ast.walk(cls if cls is not None else ctx.tree):
        if type(n) is not ast.Call:
            continue
        f = n.func
        if cls is not None:
            hit = type(f) is ast.Attribute and f.attr == func.name and type(f.value) is ast.Name and f.value.id == "self"
        else:
            hit = type(f) is ast.Name and f.id == func.name
        if hit:
            found.append(n)
    if len(found) != 1 or _starred(found[0]):
        return None
    arg = _argument(found[0], index, name)
    if arg is None:
        return None
    caller: ast.AST | None = ctx.parent(found[0])
    while caller is not None and not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
        caller = ctx.parent(caller)
    return (arg, caller) if caller is not None else None


def _helper(call: ast.Call, func: ast.AST | None, ctx: Context) -> ast.FunctionDef | None:
    """The file's function or method (of the class of `func`) that `call` runs."""
    f = call.func
    if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self" and func is not None:
        cls = analyzer(ctx).owner_class(func)
        body = cls.body if cls is not None else []
        name = f.attr
    elif type(f) is ast.Name:
        body, name = ctx.tree.body, f.id
    else:
        return None
    return next((st for st in body if type(st) is ast.FunctionDef and st.name == name), None)


def _sole_return(fn: ast.FunctionDef) -> ast.expr | None:
    """The value of the only `return` of `fn` (none in nested functions counted)."""
    returns = [n for n in ast.walk(fn) if type(n) is ast.Return]
    if len(returns) != 1 or returns[0].value is None:
        return None
    return returns[0].value


def _followed(e: ast.expr, ctx: Context) -> ast.expr:
    """`e`, or the value of the local (or module-level name) it names when bound once."""
    if type(e) is not ast.Name:
        return e
    value = built(e, ctx.function, ctx)
    return e if value is None else value


def _unstacking(e: ast.expr, ctx: Context) -> tuple[ast.expr, int | None] | None:
    """(the unstacked tensor, the constant axis or None) of `ops.unstack(x, k)`,
    `ops.unbind(x, k)`, `x.unbind(k)` or `ops.Unstack(k)(x)`; None: not one of them."""
    if type(e) is not ast.Call or _starred(e):
        return None
    f = e.func
    if type(f) is ast.Call:
        if (
            ctx.qualname(f.func) != _UNSTACK_PRIMITIVE
            or len(e.args) != 1
            or e.keywords
            or _starred(f)
        ):
            return None
        return e.args[0], _axis(_argument(f, 0, "axis"))
    q = ctx.qualname(f) or ""
    where = _UNSTACKS.get(q)
    if where is not None:
        source = _argument(e, 0, "input")
        if source is None:
            return None
        return source, _axis(_argument(e, *where))
    if (
        not q and type(f) is ast.Attribute and f.attr == "unbind"
    ):  # the tensor method (fix34d_unstack_stack_list_method)
        return f.value, _axis(_argument(e, 0, "dim"))
    return None


def _stacking(e: ast.expr, ctx: Context) -> tuple[ast.expr, int | None] | None:
    """(the stacked sequence, the constant axis or None) of `ops.stack(seq, k)` or
    `ops.Stack(k)(seq)`; None: neither."""
    if type(e) is not ast.Call or _starred(e):
        return None
    f = e.func
    if type(f) is ast.Call:
        if (
            ctx.qualname(f.func) != _STACK_PRIMITIVE
            or len(e.args) != 1
            or e.keywords
            or _starred(f)
        ):
            return None
        return e.args[0], _axis(_argument(f, 0, "axis"))
    if ctx.qualname(f) != _STACK:
        return None
    items = _argument(e, 0, "tensors")
    return (items, _axis(_argument(e, 1, "axis"))) if items is not None else None


def _axis(e: ast.expr | None) -> int | None:
    """A literal axis (`1`, `-1`), 0 when not given, None when not a literal."""
    if e is None:
        return 0
    if type(e) is ast.UnaryOp and type(e.op) is ast.USub:
        inner = _axis(e.operand)
        return -inner if inner is not None and type(e.operand) is ast.Constant else None
    if type(e) is ast.Constant and type(e.value) is int:
        return e.value
    return None


def _is_list(e: ast.expr) -> bool:
    """A list display or comprehension (heldout13b probe `unbind_chunk_listcomp_stack_unbind`)."""
    return type(e) in (ast.List, ast.ListComp)


def _starred(call: ast.Call) -> bool:
    """Does a `*args` / `**kwargs` hide which argument is which?"""
    return any(type(a) is ast.Starred for a in call.args) or any(
        k.arg is None for k in call.keywords
    )
