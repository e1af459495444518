"""MS229: a nested function whose `if` binds a value it never reads returns a tuple."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes, own_statements, returns_in
from npu_lsp.rules.graphmode.loop_lambda_result import result_used
from npu_lsp.rules.graphmode.ranks import ranks
from npu_lsp.rules.graphmode.values import UNKNOWN, in_dead_branch, instances

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: expressions MindSpore builds a node of the graph for (a call, an operator, an index...);
#: a name or a constant binds what is already there
_COMPUTED = (
    ast.Call, ast.BinOp, ast.Subscript, ast.Compare, ast.BoolOp, ast.IfExp,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)


@rule(code="MS229", name="nested-branch-unused-value", severity="error", family="graphmode")
class NestedBranchUnusedValue(GraphRule):
    """## What it does
    Flags a call in compiled code of a function nested in another (a closure `construct`
    defines, a function inside a helper or an `@ms.jit` function) when an `if` of that
    function binds a name to a computed value (`a = x[0]`, `vals, idx = ops.sort(x[0])` with
    `idx` unused, `a, b = x.shape`, `(loss, aux), g = ms.value_and_grad(f, has_aux=True)(x)`
    with `loss` unused) that the function never reads afterwards, and the caller
    uses the result (reads the name it is bound to other than in its `return`, operates
    on the call, or gives it straight to a MindSpore function: `ops.relu(stage(x))`). The `if` is one MindSpore folds while compiling (`if x.ndim == 2:`, known
    to select the side holding the binding) or one on a value of unknown kind; under a
    tensor condition the two sides cannot be joined, which MS119 reports.

    ## Why is this bad?
    MindSpore 2.10 compiles such a function to return a tuple: its `return` value and the
    unused value(s) of the branch (at both syntax levels; measured, written/lax probes
    `genfresh30_cl_*`). Using the result as a tensor then fails (`can only concatenate tuple
    (not "float") to tuple`, `'Tuple' object has no attribute 'shape'`). An unused name bound outside the `if`, or by a `for` target, a
    constant or another name, is fine, as is the same code in a module-level function, a
    method or the compiled entry itself; a result only returned prints the tuple.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            def stage(x):
                if x.ndim == 2:
                    vals, idx = ops.sort(x[0])
                    x = x + vals
                return x
            x = stage(x)
            return x + 1.0
    ```

    ## Use instead
    Do not bind what the branch does not use (`vals = ops.sort(x[0])[0]`), or make the
    function a module-level one or a method.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (written/lax probes `genfresh30_cl_*`, `genfresh30_helper_*`,
      `genfresh30_jit_nested`, `genfresh30_method_dead`; fresh v5 seeds 10600027, 11600186,
      11700107). Nested unpacking targets and results given to `ops.relu` / `mint.abs`
      (`len(...)` and a function of the file compile): probes `genfresh37_cu_const_*`,
      `genfresh37_cu2_const_*`, fresh v6 seeds 12001079, 12001110.
    """

    nodes = (ast.Call,)

    def applies(self, ctx: Context) -> bool:
        # a nested definition exists only when the text holds more `def` words than the
        # module and its classes define (test_definition_word_counts.py)
        # (class methods by the scope index's names: a name defined twice counts once, which
        # only lets more files through)
        counts = ctx.text_words()
        if counts is None:
            return True
        outer = 0
        for st in ctx.tree.body:
            if type(st) is ast.FunctionDef or type(st) is ast.AsyncFunctionDef:
                outer += 1
        for c in ctx.scopes.info.classes.values():
            outer += len(c.methods)
        return counts.get("def", 0) > outer

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        return callee is ast.Name  # a nested function is called by its name

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        func = ctx.function
        if type(f) is not ast.Name or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ()
        fn = _nested_with_unused(func, ctx).get(f.id)
        if fn is None or not (result_used(node, func, ctx, lambda e: _repeated(e, ctx)) or _operator_input(node, ctx)):
            return ()
        found = _unused_branch_value(fn, ctx)
        assert found is not None
        target, st, test = found
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{fn.name}` is nested in `{func.name}` and its `if` (line {test.lineno}) binds `{target}` "
                f"(line {st.lineno}) to a value it never reads: MindSpore compiles the call to return a tuple "
                "of its result and that value, and the result is used here as a tensor (e.g. \"can only "
                f"concatenate tuple (not 'float') to tuple\"); drop the unused binding or make `{fn.name}` a "
                "module-level function or a method",
            )
        ]


def _nested_with_unused(func: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context) -> dict[str, ast.FunctionDef]:
    """The functions defined in `func` (by name) that have such an unused branch value (once
    per function: its statements, not its expressions, are walked)."""
    key = ("ms229-nested", id(func))
    hit: dict[str, ast.FunctionDef] | None = ctx.cache.get(key)
    if hit is None:
        hit = {}
        for st in own_statements(func.body, ctx):
            if type(st) is ast.FunctionDef and _unused_branch_value(st, ctx) is not None:
                hit[st.name] = st
        ctx.cache[key] = hit
    return hit


def _unused_branch_value(fn: ast.FunctionDef, ctx: Context) -> tuple[str, ast.stmt, ast.expr] | None:
    """The first name an `if` of `fn` (compiled side) binds to a computed value and `fn`
    never reads afterwards, with its statement and the `if`'s condition."""
    key = ("ms229-unused", id(fn))
    if key in ctx.cache:
        hit: tuple[str, ast.stmt, ast.expr] | None = ctx.cache[key]
        return hit
    found = None
    ifs = [n for n in own_statements(fn.body, ctx) if type(n) is ast.If]
    if ifs:
        nodes = own_nodes(fn)
        reads, nested = _reads(fn, nodes)
        loops: list[ast.stmt] = [n for n in nodes if isinstance(n, (ast.For, ast.While))]
        a = analyzer(ctx)
        for test_of in ifs:
            kind = a.kind(test_of.test, fn)
            if kind.dynamic:
                continue  # a branch of the graph: the two sides fail to join (MS119)
            for side in (test_of.body, test_of.orelse):
                if not _compiled_side(test_of, side is test_of.body, kind, fn, ctx) or returns_in(side):
                    continue
                for st in side:
                    if type(st) is not ast.Assign or in_dead_branch(ctx, fn, ctx.span(st)):
                        continue
                    for name in _computed_targets(st):
                        if name not in nested and not _read_later(name, st, reads, loops):
                            found = (name, st, test_of.test)
                            break
                    if found:
                        break
                if found:
                    break
            if found:
                break
    ctx.cache[key] = found
    return found


def _compiled_side(test_of: ast.If, body: bool, kind: Kind, fn: ast.FunctionDef, ctx: Context) -> bool:
    """Is the body (`body`) or else side of `test_of` the one MindSpore compiles? A condition
    fixed while compiling must be known to select it in some call context or loop pass (a
    constant this module evaluates, or the shapes the program feeds in: `if x.ndim == 2:`,
    ranks.py); one of unknown kind (a JIT Fallback
    value's `x.max() > -1000`: fresh v5 seed 11600186) compiles both."""
    if kind != Kind.CONST:
        return True
    value = instances(ctx).evaluate(test_of.test, fn)
    if value is not UNKNOWN:
        return bool(value) == body
    # in some call context or pass of an unrolled loop (`for i in range(2): if i == 1:`)
    return any(type(v) in (int, bool) and bool(v) == body for v in ranks(ctx).value_at(test_of.test, fn))


def _computed_targets(st: ast.Assign) -> list[str]:
    """The names `st` binds to a computed value: `a = x[0]`, each name of `a, b = x[0], 1`
    paired with a computed item, every name unpacked from anything else (`a, b = x.shape`:
    MindSpore takes each item out of the value)."""
    out: list[str] = []
    for t in st.targets:
        if isinstance(t, ast.Name):
            if _computed(st.value):
                out.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            v = st.value
            if isinstance(v, (ast.Tuple, ast.List)) and len(v.elts) == len(t.elts):
                out.extend(e.id for e, item in zip(t.elts, v.elts, strict=True) if isinstance(e, ast.Name) and _computed(item))
            else:
                out.extend(_unpacked_names(t))
    return out


def _unpacked_names(t: ast.Tuple | ast.List) -> list[str]:
    """The names an unpacking target binds, nested ones too (`(loss, aux), grads =
    ms.value_and_grad(f, has_aux=True)(x)` binds `loss`; measured, written/lax probe
    `genfresh37_cu2_const_if_nested_unpack`, fresh v6 seed 12001079)."""
    out: list[str] = []
    for e in t.elts:
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, (ast.Tuple, ast.List)):
            out.extend(_unpacked_names(e))
    return out


def _computed(e: ast.expr) -> bool:
    if isinstance(e, _COMPUTED):
        return True
    if isinstance(e, ast.UnaryOp):
        return _computed(e.operand)
    if isinstance(e, (ast.Tuple, ast.List)):
        return any(_computed(i) for i in e.elts)
    return False


def _reads(fn: ast.FunctionDef, nodes: list[ast.AST]) -> tuple[dict[str, list[tuple[int, int]]], set[str]]:
    """Where `fn` reads each name, and the names its nested functions and lambdas read."""
    reads: dict[str, list[tuple[int, int]]] = {}
    nested: set[str] = set()
    for n in nodes:
        if type(n) is ast.Name and isinstance(n.ctx, ast.Load):
            reads.setdefault(n.id, []).append((n.lineno, n.col_offset))
        elif isinstance(n, _FUNCS) and n is not fn:
            nested.update(m.id for m in ast.walk(n) if type(m) is ast.Name and isinstance(m.ctx, ast.Load))
    return reads, nested


def _read_later(name: str, st: ast.stmt, reads: dict[str, list[tuple[int, int]]], loops: list[ast.stmt]) -> bool:
    """Is `name` read after `st`, or anywhere in a loop around `st` (the next pass reads it)?"""
    at = (st.end_lineno or st.lineno, st.end_col_offset or 0)
    spots = reads.get(name, [])
    if any(r > at for r in spots):
        return True
    for loop in loops:
        first, last = (loop.lineno, loop.col_offset), (loop.end_lineno or loop.lineno, loop.end_col_offset or 0)
        if first < (st.lineno, st.col_offset) and at <= last and any(first <= r <= last for r in spots):
            return True
    return False


def _operator_input(call: ast.Call, ctx: Context) -> bool:
    """`ops.relu(f(x))`, `mint.abs(f(x))`: the result given straight to a MindSpore function,
    which takes no tuple for its tensor ("Failed calling ReLU with
    "input=Tuple[Tensor[Float32]*2]""; measured, written/lax probes `genfresh37_cu2_const_if_*`:
    `len(f(x))` or a function of this file returning `t[0]` compile)."""
    child: ast.expr = call
    parent = ctx.parent(call)
    while isinstance(parent, ast.IfExp) and child is not parent.test:
        child, parent = parent, ctx.parent(parent)  # `ops.relu(f(x) if c else x)`
    if not isinstance(parent, ast.Call) or child not in parent.args:
        return False
    return (ctx.qualname(parent.func) or "").startswith("mindspore.")


def _repeated(e: ast.expr, ctx: Context) -> bool:
    """`f(x) * 2` (or `y * 2` of `y = f(x)`): a tuple repeated by an int is still a tuple,
    which compiles (probe `genfresh30_cl_scale_int`)."""
    parent = ctx.parent(e)
    return (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, ast.Mult)
        and any(isinstance(s, ast.Constant) and type(s.value) is int for s in (parent.left, parent.right))
    )
