"""MS230: what `ms.vmap` cannot batch in the function it maps."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.abstract import RANDOM_SOURCES
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.ranks import Shape, ranks

#: MindSpore's vectorising map, by the qualified name's last part (`ms.vmap`, `ops.vmap`)
_VMAP = frozenset({"vmap"})
#: tensor attributes that are constants of the graph, not batched values
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
#: builtins whose result does not depend on the batched values
_STATIC_BUILTINS = frozenset({"len", "isinstance", "type"})
#: conversions of a tensor to a Python number
_TO_NUMBER = frozenset({"int", "float", "bool"})


@rule(code="MS230", name="vmap-unsupported-body", severity="error", family="graphmode")
class VmapUnsupportedBody(GraphRule):
    """## What it does
    Flags, in a function (or the `construct` of a Cell) that `ms.vmap` maps in compiled
    code (`ms.vmap(f)(xs)` in an `@ms.jit` function or `construct`, or a module-level
    `batched = ms.vmap(f)` called there), what vmap cannot batch:
    - an `if`, `while` or conditional expression whose test depends on a mapped input
      (`if ops.norm(x) > 1.0:`, `while x.sum() > 10.0:`, `x * 2 if x.sum() > 0 else x`);
    - a mapped value turned into a Python number (`x.argmax().item()`, `float(x.max())`);
    - a random draw (`ops.standard_normal(x.shape)`, `ops.rand_like(x)`, `ops.uniform`);
    - an index or slice of an input mapped with `in_axes=None` that the caller gives a
      tensor (`coeffs[i]`, `coeffs[0]`, `coeffs[1:]`);
    - `ops.matmul(w, x)` or `w @ x` of a matrix mapped with `in_axes=None` by a mapped
      input whose rows are vectors, when the shapes the compiled caller passes are known
      and the mapped argument's first axis is not the matrix's last.
    Inputs mapped with `in_axes=None` are not batched: a branch on one does not count.

    ## Why is this bad?
    MindSpore 2.10 batches the function's graph rule by rule. A branch on a batched value
    stops compiling at every syntax level with `ValueError: In the scenario where vmap
    contains control flow, currently only the case of each batch branch with the same
    processing operations is supported` (even when both branches run the same operation);
    a Python number per row cannot be stacked (`For 'Stack', the element of 'input_x[0]'
    must be Tensor, but got Int64`); random primitives have no batching rule for their
    shape (`For primitive[StandardNormal], the input argument[shape] must be a type of
    {Int32, Int64}, but got Tuple[Int64]`, `Unexpected element type of input0`); slicing
    an unmapped tensor fails with `For Operator[StridedSlice], the inputs number should be
    9 but got 4`; MatMulExt's batching rule multiplies the unmapped matrix by the whole
    mapped argument (`(3, 4) @ (5, 4)`: `For 'MatMulExt' op, shape1[-1] must be equal to
    shape2[-2], but got 4 and 5`).

    ## Example
    ```python
    def clip_row(x):
        n = ops.norm(x)
        if n > 1.0:
            return x / n
        return x

    @ms.jit
    def run(xs):
        return ms.vmap(clip_row)(xs)
    ```

    ## Use instead
    Select with tensors instead of branching, keep values as tensors, and draw the random
    numbers for the whole batch outside the mapped function:
    ```python
    def clip_row(x):
        n = ops.norm(x)
        return ops.where(n > 1.0, x / n, x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (limits of `ms.vmap`'s batching rules, rejected at every
      level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout30b`
      (`vmap_tensor_if_inside_fn`, `vmap_item_inside_mapped_fn`,
      `vmap_random_inside_mapped`) and its probes `fix30d_vmap_*`: a tensor `if` (also with
      the same operation in both branches, in a Cell's `construct`, through a module-level
      `ms.vmap`), a tensor `while`, a conditional expression, `.item()`, `float(...)`,
      `ops.standard_normal` (also of a constant shape), `ops.rand_like`, `ops.uniform` are
      rejected, and so are `coeffs[i]` in a loop, `coeffs[0]` and `coeffs[1:]` of an input
      mapped with `in_axes=None` (`vmap_python_loop_inside_fn_clean`, probes
      `fix30d_vloop_*`); an `if` on a Python constant or on `x.shape[0]`, a loop indexing
      the mapped row (`x[i]`, also over `range(coeffs.shape[0])` of a mapped `coeffs`), and
      `ops.where` compile. `ops.matmul(w, x)` / `w @ x` of an unmapped `(3, 4)` matrix by
      rows of a mapped `(5, 4)` or `(6, 4)` is rejected (`vmap_in_axes_none_clean`,
      probes `fix31b_v_*`); `ops.mv`, a column `x[:, None]`, a vector first, mapped
      matrices, a `(4, 4)` batch and `in_axes=1` on a `(4, 5)` argument compile.
    """

    # the mapped function is no graph scope of its own: the rule finds the `vmap` calls of
    # compiled code once per module
    nodes = (ast.Module,)
    graph_only = False
    words = ("vmap",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        if not ctx.mentions("vmap"):
            return  # the walk below asks for a qualified name of every compiled call
        seen: set[int] = set()
        for call, applied, caller in compiled_vmaps(node, ctx):
            target = mapped_function(call, node, ctx)
            if target is None or id(target[0]) in seen:
                continue
            seen.add(id(target[0]))
            fn, params = target
            batched = _batched_params(call, params)
            if batched is None:
                continue
            unmapped = _tensor_arguments(applied, caller, params, ctx) - batched
            found = _first_unbatchable(fn, batched, unmapped, ctx) or _matrix_by_mapped_vector(fn, call, applied, caller, params, ctx)
            if found is not None:
                where, why = found
                yield ctx.diagnostic(self, where, f"`{fn.name}` is mapped by `ms.vmap`, which {why}")


def _is_vmap(call: ast.Call, ctx: Context) -> bool:
    q = ctx.qualname(call.func) or ""
    return q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in _VMAP and bool(call.args)


def _tensor_arguments(applied: ast.Call | None, caller: ast.AST, params: list[str], ctx: Context) -> set[str]:
    """The parameters the mapped call gives a tensor of the compiled caller (positionally)."""
    if applied is None or any(isinstance(a, ast.Starred) for a in applied.args):
        return set()
    a = analyzer(ctx)
    return {p for p, arg in zip(params, applied.args, strict=False) if a.kind(arg, caller) == Kind.TENSOR}


def compiled_vmaps(tree: ast.Module, ctx: Context) -> Iterator[tuple[ast.Call, ast.Call | None, ast.AST]]:
    """The `vmap` calls compiled code makes (in a graph scope, or bound at module level to
    a name a graph scope calls), with the call applying the mapped function there (None when
    not applied in place) and the compiled function."""
    module_level: dict[str, ast.Call] = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and _is_vmap(st.value, ctx):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    module_level[t.id] = st.value
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.scopes.scope_for(fn) is None:
            continue
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            if isinstance(n.func, ast.Call) and _is_vmap(n.func, ctx):
                yield n.func, n, fn  # `ms.vmap(f)(xs)`
            elif _is_vmap(n, ctx):
                yield n, None, fn
            elif isinstance(n.func, ast.Name) and n.func.id in module_level:
                yield module_level[n.func.id], n, fn


def mapped_function(call: ast.Call, tree: ast.Module, ctx: Context) -> tuple[ast.FunctionDef, list[str]] | None:
    """The function `call` maps and its parameters: a module-level function by name, or
    the `construct` of a Cell of this file made at module level (`clip = Clip()`)."""
    f = call.args[0]
    if not isinstance(f, ast.Name):
        return None
    for st in tree.body:
        if isinstance(st, ast.FunctionDef) and st.name == f.id:
            return st, [a.arg for a in (*st.args.posonlyargs, *st.args.args)]
    made = [
        st.value
        for st in tree.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == f.id for t in st.targets)
    ]
    if len(made) != 1 or not isinstance(made[0], ast.Call) or not isinstance(made[0].func, ast.Name):
        return None
    cls = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == made[0].func.id), None)
    construct = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None) if cls else None
    if construct is None:
        return None
    return construct, [a.arg for a in (*construct.args.posonlyargs, *construct.args.args)][1:]


def _batched_params(call: ast.Call, params: list[str]) -> set[str] | None:
    """The parameters `in_axes` maps (all by default; not those given `None`); None when
    `in_axes` is not a literal this rule can read."""
    axes = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "in_axes"), None)
    if axes is None or (isinstance(axes, ast.Constant) and isinstance(axes.value, int)):
        return set(params)
    if isinstance(axes, (ast.Tuple, ast.List)) and len(axes.elts) == len(params):
        return {p for p, a in zip(params, axes.elts, strict=True) if not (isinstance(a, ast.Constant) and a.value is None)}
    return None


def _first_unbatchable(fn: ast.FunctionDef, batched: set[str], unmapped: set[str], ctx: Context) -> tuple[ast.AST, str] | None:
    """The first branch on a batched value, Python number made of one, random draw, or
    slice of an unmapped tensor input in `fn`'s body (nested functions left out)."""
    tensors = set(batched)
    found: list[tuple[ast.AST, str]] = []
    for n in _own_nodes(fn):
        if isinstance(n, ast.Assign) and _depends(n.value, tensors):
            tensors.update(t.id for t in n.targets if isinstance(t, ast.Name))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and _depends(n.value, tensors):
            tensors.add(n.target.id)
        for t in _stored_names(n):
            unmapped.discard(t)
    for n in _own_nodes(fn):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in unmapped:
            found.append((n, f"cannot slice `{n.value.id}`, an input mapped with `in_axes=None` (For Operator[StridedSlice], the inputs number should be 9 but got 4); map it (`in_axes=0` on a tiled copy) or index it outside the mapped function"))
            continue
        if isinstance(n, (ast.If, ast.While, ast.IfExp)) and _depends(n.test, tensors):
            found.append((n.test, "cannot batch control flow on a mapped value (vmap contains control flow: each batch branch must run the same operations); select with `ops.where` instead"))
        elif isinstance(n, ast.Call):
            why = _call_problem(n, tensors, ctx)
            if why is not None:
                found.append((n, why))
    return min(found, key=lambda f: (f[0].lineno, f[0].col_offset)) if found else None  # type: ignore[attr-defined]


def _matrix_by_mapped_vector(
    fn: ast.FunctionDef, call: ast.Call, applied: ast.Call | None, caller: ast.AST, params: list[str], ctx: Context
) -> tuple[ast.AST, str] | None:
    """`ops.matmul(w, x)` / `w @ x` of an input mapped with `in_axes=None` that is a matrix
    by a mapped input whose rows are vectors. Measured (heldout30b `vmap_in_axes_none_clean`,
    probes `fix31b_v_*`): MatMulExt's batching rule keeps the batch axis of `x` as its rows,
    so `(3, 4) @ (5, 4)` fails with "shape1[-1] must be equal to shape2[-2], but got 4 and
    5"; a vector first (`ops.matmul(x, w.T)`), a column `x[:, None]`, mapped matrices, a
    batch of 4 rows, and `in_axes=1` (the `(4, 5)` argument multiplied as is) compile.
    Said only when the shapes are known and the argument's first axis is not the
    matrix's last."""
    if applied is None or any(isinstance(a, ast.Starred) for a in applied.args) or not (ctx.mentions("matmul") or ctx.mentions("@")):
        return None
    axes = _in_axes(call, params)
    if axes is None:
        return None
    shapes = {p: _one_shape(arg, caller, ctx) for p, arg in zip(params, applied.args, strict=False)}
    stored = {t for n in _own_nodes(fn) for t in _stored_names(n)}
    for n in _own_nodes(fn):
        pair = _matmul_operands(n, ctx)
        if pair is None:
            continue
        a, b = pair
        if a in stored or b in stored or axes.get(a, 0) is not None or axes.get(b, 0) is None:
            continue
        matrix, rows = shapes.get(a), shapes.get(b)
        if matrix is None or rows is None or len(matrix) < 2 or len(rows) != 2:
            continue
        # the batching rule multiplies by the mapped argument as given: its first axis
        # meets the matrix's last (in_axes=1 keeps the vector's axis there: it compiles)
        batch = rows[0]
        if batch is not None and matrix[-1] is not None and batch != matrix[-1]:
            return n, f"cannot batch `{ctx.segment(n)}` of the unmapped matrix `{a}` by the mapped vector `{b}`: MatMulExt's batching rule multiplies by the whole mapped argument ({batch} rows against {matrix[-1]} columns: shape1[-1] must be equal to shape2[-2]); use `ops.mv` or a column `{b}[:, None]`"
    return None


def _in_axes(call: ast.Call, params: list[str]) -> dict[str, int | None] | None:
    """Each parameter's mapped axis (None: not mapped), from a literal `in_axes`."""
    axes = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "in_axes"), None)
    if axes is None:
        return dict.fromkeys(params, 0)
    if isinstance(axes, ast.Constant) and type(axes.value) is int:
        return dict.fromkeys(params, axes.value)
    if isinstance(axes, (ast.Tuple, ast.List)) and len(axes.elts) == len(params):
        out: dict[str, int | None] = {}
        for p, a in zip(params, axes.elts, strict=True):
            if not (isinstance(a, ast.Constant) and (a.value is None or type(a.value) is int)):
                return None
            out[p] = a.value
        return out
    return None


def _one_shape(arg: ast.expr, caller: ast.AST, ctx: Context) -> Shape | None:
    """The shape `arg` has in every known call context of the compiled caller."""
    got = {v for v in ranks(ctx).value_at(arg, caller) if isinstance(v, tuple)}
    return got.pop() if len(got) == 1 else None


def _matmul_operands(n: ast.AST, ctx: Context) -> tuple[str, str] | None:
    """The names multiplied by `ops.matmul(a, b)` or `a @ b`."""
    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
        a, b = n.left, n.right
    elif isinstance(n, ast.Call) and len(n.args) == 2 and (ctx.qualname(n.func) or "").rsplit(".", 1)[-1] == "matmul":
        if not (ctx.qualname(n.func) or "").startswith("mindspore."):
            return None
        a, b = n.args
    else:
        return None
    return (a.id, b.id) if isinstance(a, ast.Name) and isinstance(b, ast.Name) else None


def _call_problem(n: ast.Call, tensors: set[str], ctx: Context) -> str | None:
    f = n.func
    if isinstance(f, ast.Attribute) and f.attr == "item" and not n.args and _depends(f.value, tensors):
        return "cannot stack the Python number `.item()` gives for each row (For 'Stack', the element must be Tensor); keep it a tensor"
    if isinstance(f, ast.Name) and f.id in _TO_NUMBER and len(n.args) == 1 and _depends(n.args[0], tensors):
        return f"cannot stack the Python number `{f.id}(...)` gives for each row (For 'Stack', the element must be Tensor); keep it a tensor"
    q = ctx.qualname(f) or ""
    if q.startswith("mindspore.ops.") and q.rsplit(".", 1)[-1] in RANDOM_SOURCES:
        return "has no batching rule for random draws (StandardNormal / Uniform shape); draw the noise for the whole batch outside the mapped function"
    return None


def _stored_names(n: ast.AST) -> list[str]:
    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
        return [n.id]
    return []


def _own_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    stack: list[ast.AST] = list(reversed(fn.body))
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _depends(e: ast.AST, tensors: set[str]) -> bool:
    """Does `e` read a batched value: one of `tensors`, other than through a static
    attribute (`x.shape`) or a static builtin (`len(x)`)?"""
    if isinstance(e, ast.Name):
        return e.id in tensors
    if isinstance(e, ast.Attribute) and e.attr in _STATIC_ATTRIBUTES:
        return False
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in _STATIC_BUILTINS:
        return False
    return any(_depends(c, tensors) for c in ast.iter_child_nodes(e))
