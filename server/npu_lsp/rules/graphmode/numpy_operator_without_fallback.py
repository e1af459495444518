"""MS256: `~arr`, unary `+arr` or `@` on a numpy array in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.constructed import init_of
from npu_lsp.rules.graphmode.dynamic_shape import binds_name
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.result_kinds import NUMPY_UFUNCS
from npu_lsp.rules.graphmode.values import instances

#: Python operators whose graph implementation refuses a numpy array, from MindSpore 2.10's
#: own tables: `graph/_parse/resources.py`'s `convert_object_map` sends every operator to a
#: `MultitypeFuncGraph` of `ops/composite/multitype_ops/*_impl.py`; of those only `invert`
#: (`~`) and `uadd` (unary `+`) register no `_register_default` (the interpreted fallback
#: every other operator has, `add`, `negative`, `logical_not`, `equal`, the augmented
#: assignments ...), so `MultitypeFuncGraph.__call__` meets the constant array and raises.
#: `@` goes to the primitive `F.matmul`, which takes tensors only.
_UNARY_OPS: dict[type[ast.unaryop], tuple[str, str]] = {
    ast.Invert: ("~", "invert"),
    ast.UAdd: ("+", "uadd"),
}

#: numpy functions that always give an array (whatever their arguments): measured through
#: `np.zeros`, `np.arange`, `np.array` ... (written/heldout40a probes `fix40c_np_*`, `fix41a_np_*`)
_ARRAY_MAKERS = frozenset(
    {
        "array", "asarray", "ascontiguousarray", "zeros", "ones", "empty", "full", "arange",
        "linspace", "eye", "identity", "zeros_like", "ones_like", "empty_like", "full_like",
        "concatenate", "stack", "hstack", "vstack", "tile", "repeat", "reshape", "transpose",
        "triu", "tril", "cumsum", "cumprod", "flip", "sort", "argsort", "outer", "clip",
    }
)  # fmt: skip

#: numpy array methods (and `.T`) that give an array again
_ARRAY_METHODS = frozenset({"copy", "astype", "reshape", "flatten", "ravel", "transpose"})

_DEPTH = 6


@rule(code="MS256", name="numpy-operator-without-fallback", severity="error", family="graphmode")
class NumpyOperatorWithoutFallback(GraphRule):
    """## What it does
    Flags, in compiled code, `~a` and unary `+a` of a numpy array, and `a @ b` with a numpy
    array on either side: an array made by a numpy function there (`np.zeros(n, dtype=bool)`,
    `np.arange(4)`, `np.isnan(arr)`), a module-level array, an array `__init__` keeps on
    `self`, or one derived from those (a name bound to it, `arr.astype(bool)`, `arr[1:]`,
    `arr > 1`, `arr & other`): learn2learn's `np.nonzero(~adaptation_indices)` in `construct`.
    For `~` and unary `+`, also the host copy of a tensor, `t.asnumpy()`, and what is derived
    from it (`~(pred.asnumpy() >= self.thr)`), unless it is an argument of another library's
    function (`distance_transform_edt(~mask)`), which LAX runs whole as Python.

    ## Why is this bad?
    MindSpore keeps a numpy array in compiled code as an interpreted constant, and each Python
    operator on it goes to a MindSpore operator function that falls back to Python for such
    values: `-a`, `a == 0`, `a & b`, `not a`, `a + 1` compile. `~` (`invert`) and unary `+`
    (`uadd`) are the only operators whose function has no such fallback (MindSpore 2.10's
    `ops/composite/multitype_ops`), so both levels stop with `TypeError: For
    'MultitypeFuncGraph', the input can not be numpy.ndarray`. `@` is the MatMul primitive,
    which refuses the array (`Failed calling MatMulExt with "input=External"`). A numpy scalar
    (`np.mean(a)`, `np.isnan(3.0)`, an item `a[1]`) is a plain graph number there and is fine,
    as is the same code in `__init__`.

    ## Example
    ```python
    def construct(self, x):
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[::2] = True
        keep = np.nonzero(~mask)[0]
        return x[ms.Tensor(keep, ms.int32)]
    ```

    ## Use instead
    ```python
    def construct(self, x):
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[::2] = True
        keep = np.nonzero(np.logical_not(mask))[0]
        return x[ms.Tensor(keep, ms.int32)]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 0 (what gets compiled: Python values in compiled code).
    - Measured on MindSpore 2.10 CPU (written/heldout40a case `episode_boolean_mask_indices_numpy`,
      probes `fix40c_np_*`, `fix41a_np_*`): `~` of a local `np.zeros(4, dtype=bool)` (also after
      `m[idx] = True`), of `np.arange(4)`, of a module-level array, of `self.mask`, of
      `~(m > 1)`, `~np.isnan(m)`, `~m.astype(bool)`, `~MASK[1:]`, `~np.array(3)`, in a helper
      method or an `@ms.jit` function; `+m` of a local, module-level or `self` array; `a @ x`,
      `np.ones(...) @ np.ones(...)`: refused at LAX and STRICT. `-m`, `m == False`,
      `np.logical_not(m)`, `np.invert(m)`, `~` of a tensor, `~IDX[1]`, `~np.isnan(3.0)`,
      `+np.mean(IDX)` and `~` in `__init__` compile. Under LAX `~` / `+` of `t.asnumpy()`,
      of `t.asnumpy() >= self.thr`, of `(t > 0.5).asnumpy()` fail the same way, while `-`,
      `np.logical_not` and `a @ b` of two such copies compile (written/heldout42a cases
      `nowcast_csi_numpy_in_construct`, `r2_nowcast_csi_numpy_maximum_denominator`, probes
      `fix43a_nx_*`).
    """

    nodes = (ast.UnaryOp, ast.BinOp)
    words = ("numpy",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most operators stop at the first test
        if ctx.function is None:
            return ()
        if type(node) is ast.UnaryOp:
            spelled = _UNARY_OPS.get(type(node.op))
            if spelled is None:
                return ()
            if not _numpy_array(node.operand, ctx, ctx.function, 0) and (
                not _numpy_array(node.operand, ctx, ctx.function, 0, host=True) or _given_to_foreign_call(node, ctx)
            ):
                return ()
            sym, name = spelled
            return [
                ctx.diagnostic(
                    self,
                    node,
                    f"`{sym}` of the numpy array `{ctx.segment(node.operand)}` in compiled code: MindSpore's `{name}` operator has no Python fallback for numpy arrays (MindSpore: For 'MultitypeFuncGraph', the input can not be numpy.ndarray); use {_instead(sym)}, or compute it in `__init__`",
                )
            ]
        assert isinstance(node, ast.BinOp)
        if type(node.op) is not ast.MatMult:
            return ()
        if _numpy_array(node.left, ctx, ctx.function, 0):
            side, arg = node.left, "input"
        elif _numpy_array(node.right, ctx, ctx.function, 0):
            side, arg = node.right, "other"
        else:
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f'`@` with the numpy array `{ctx.segment(side)}` in compiled code: MindSpore\'s `@` is the MatMul primitive, which takes tensors only (MindSpore: Failed calling MatMulExt with "{arg}=External"); wrap the array in `ms.Tensor(...)`',
            )
        ]


def _given_to_foreign_call(node: ast.expr, ctx: Context) -> bool:
    """Is `node` inside the arguments of a call of a function of another library than numpy
    or MindSpore (`distance_transform_edt(~mask)` of `scipy.ndimage`)? Such a call runs, its
    arguments too, as Python under LAX: `~` of a host copy there compiles (measured,
    written/heldout24b case `r2_loss_boundary_edt_whole_array`)."""
    child: ast.AST = node
    parent = ctx.parent(node)
    while isinstance(parent, ast.expr):
        if type(parent) is ast.Call and child is not parent.func:
            q = ctx.qualname(parent.func) or ""
            if q and q.partition(".")[0] not in ("numpy", "mindspore", "builtins"):
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _instead(sym: str) -> str:
    return (
        "`np.logical_not(...)` / `np.invert(...)`"
        if sym == "~"
        else "the array itself (unary `+` copies nothing)"
    )


def _numpy_array(e: ast.expr, ctx: Context, func: ast.AST | None, depth: int, host: bool = False) -> bool:
    """Is `e` (read in `func`; None: module level) surely a numpy array (not a numpy scalar,
    not a tensor) in compiled code?"""
    if depth > _DEPTH:
        return False
    t = type(e)
    if t is ast.Call:
        return _array_call(e, ctx, func, depth, host)  # type: ignore[arg-type]
    if t is ast.Name:
        return _array_name(e, ctx, func, depth, host)  # type: ignore[arg-type]
    if t is ast.Attribute:
        assert isinstance(e, ast.Attribute)
        if e.attr == "T":
            return _numpy_array(e.value, ctx, func, depth + 1, host)
        return _self_array(e, ctx, func, depth, host)
    if t is ast.Subscript:
        # a slice of an array is an array (an item is a numpy scalar: a graph number)
        assert isinstance(e, ast.Subscript)
        if type(e.slice) is ast.Slice:
            return _numpy_array(e.value, ctx, func, depth + 1, host)
        item = _display_item(e, ctx, func)
        return item is not None and _numpy_array(item, ctx, func, depth + 1, host)
    if t is ast.UnaryOp:
        assert isinstance(e, ast.UnaryOp)
        return type(e.op) is ast.USub and _numpy_array(e.operand, ctx, func, depth + 1, host)
    if t is ast.BinOp:
        assert isinstance(e, ast.BinOp)
        return type(e.op) is not ast.MatMult and _array_pair(e.left, e.right, ctx, func, depth, host)
    if t is ast.Compare:
        assert isinstance(e, ast.Compare)
        if len(e.ops) != 1 or type(e.ops[0]) in (ast.Is, ast.IsNot, ast.In, ast.NotIn):
            return False
        return _array_pair(e.left, e.comparators[0], ctx, func, depth, host)
    return False


def _display_item(e: ast.Subscript, ctx: Context, func: ast.AST | None) -> ast.expr | None:
    """`seq[i]` with a constant `i` of a list / tuple display (or a local bound once to one):
    that item (`[MASK, MASK][0]` is the array)."""
    i = e.slice
    if type(i) is not ast.Constant or type(i.value) is not int:
        return None
    seq = e.value
    if type(seq) is ast.Name and func is not None:
        a = analyzer(ctx)
        if a.changes(seq.id, func):  # `seqs[0] = t`, `seqs.insert(0, t)`: items may differ
            return None
        seq = a.single_assignment(seq.id, func) or seq
    if type(seq) not in (ast.List, ast.Tuple):
        return None
    elts = seq.elts  # type: ignore[attr-defined]
    if any(type(x) is ast.Starred for x in elts) or not -len(elts) <= i.value < len(elts):
        return None
    return elts[i.value]


def _array_pair(
    left: ast.expr, right: ast.expr, ctx: Context, func: ast.AST | None, depth: int, host: bool = False
) -> bool:
    """An operator of two arrays, or of an array and a number literal, gives an array (its
    MindSpore function falls back to Python: measured `~(m > 1)`, `~(MASK & MASK)`)."""
    lhs = _numpy_array(left, ctx, func, depth + 1, host)
    rhs = _numpy_array(right, ctx, func, depth + 1, host)
    if lhs and rhs:
        return True
    other = right if lhs else left if rhs else None
    return other is not None and (_number_literal(other) or _number_value(other, ctx, func))


def _number_value(e: ast.expr, ctx: Context, func: ast.AST | None) -> bool:
    """A name or `self.<attr>` the instance model knows as a number (`pred.asnumpy() >=
    self.thr` with `thr=0.5` given to every instance)."""
    if type(e) not in (ast.Name, ast.Attribute):
        return False
    return type(instances(ctx).evaluate(e, func)) in (int, float, bool)


def _number_literal(e: ast.expr) -> bool:
    if type(e) is ast.UnaryOp and type(e.op) is ast.USub:
        e = e.operand
    return type(e) is ast.Constant and type(e.value) in (int, float, bool)


def _array_call(call: ast.Call, ctx: Context, func: ast.AST | None, depth: int, host: bool = False) -> bool:
    f = call.func
    if (
        type(f) is ast.Attribute
        and f.attr in _ARRAY_METHODS
        and _numpy_array(f.value, ctx, func, depth + 1, host)
    ):
        return True
    if host and type(f) is ast.Attribute and f.attr == "asnumpy" and not call.args and not call.keywords:
        # the host copy of a tensor (run-time under LAX's fallback): `~` and unary `+` of it
        # fail like those of a constant array, while `a @ b` of two such copies compiles
        # (written/heldout42a probes `fix43a_nx_*`)
        return True
    q = ctx.qualname(f) or ""
    if not q.startswith("numpy.") or q.startswith("numpy.random"):
        return False
    name = q[6:]
    if func is not None and _reads_runtime_value(call, ctx, func):
        # `np.array(x)` of a tensor runs at run time (LAX's PyExecute), not while compiling:
        # what it gives there was not measured
        return False
    if name in _ARRAY_MAKERS:
        return True
    if name == "where":
        return len(call.args) == 3
    # a ufunc gives an array when one of its inputs is an array (of numbers it gives a numpy
    # scalar, a graph number: `~np.isnan(3.0)` compiles)
    return name in NUMPY_UFUNCS and any(_numpy_array(a, ctx, func, depth + 1, host) for a in call.args)


def _reads_runtime_value(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    a = analyzer(ctx)
    return any(a.kind(v, func).dynamic for v in (*call.args, *(k.value for k in call.keywords)))


def _array_name(e: ast.Name, ctx: Context, func: ast.AST | None, depth: int, host: bool = False) -> bool:
    if func is not None:
        a = analyzer(ctx)
        if a.is_local(e.id, func):
            value = a.single_assignment(e.id, func) or _last_assignment(e, ctx, func)
            return value is not None and _numpy_array(value, ctx, func, depth + 1, host)
    # a global: bound once at module level, to an array
    binds = ctx.module_bindings().get(e.id)
    if not binds or len(binds) != 1:
        return False
    st = binds[0]
    if type(st) is not ast.Assign or len(st.targets) != 1 or type(st.targets[0]) is not ast.Name:
        return False
    return _numpy_array(st.value, ctx, None, depth + 1, host)


def _last_assignment(e: ast.Name, ctx: Context, func: ast.AST) -> ast.expr | None:
    """The value of the plain `name = value` nearest before the read in its block or a block
    around it (up to `func`). Unlike `Analyzer.bound_value`, an in-place change in between
    (`mask[idx] = True`, `mask.fill(0)`) does not stop the search: it keeps an array an array.
    None when another binding (augmented, unpacking, a loop or `try` around the read that
    binds the name) comes first."""
    parent = ctx.parent
    child: ast.AST = e
    node = parent(e)
    while node is not None:
        t = type(node)
        if (
            t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            and node is not func
        ):
            return None
        if t in (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp):
            return None
        for block in ("body", "orelse", "finalbody"):
            stmts = getattr(node, block, None)
            if type(stmts) is not list:
                continue
            i = next((i for i, st in enumerate(stmts) if st is child), -1)
            if i < 0:
                continue
            for st in reversed(stmts[:i]):
                if not binds_name(st, e.id) or _number_update(st, e.id):
                    continue
                if type(st) is ast.Assign and len(st.targets) == 1:
                    target = st.targets[0]
                    if type(target) is ast.Name and target.id == e.id:
                        return st.value
                return None
            break
        if node is func:
            return None
        if t in (ast.For, ast.AsyncFor, ast.While, ast.Try) and binds_name(node, e.id):
            return None  # a later turn, or a handler, may see another binding
        child, node = node, parent(node)
    return None


def _number_update(st: ast.stmt, name: str) -> bool:
    """`name += 1` (any operator but `@`, a number literal): an array stays an array."""
    return (
        type(st) is ast.AugAssign
        and type(st.target) is ast.Name
        and st.target.id == name
        and type(st.op) is not ast.MatMult
        and _number_literal(st.value)
    )


def _self_array(e: ast.Attribute, ctx: Context, func: ast.AST | None, depth: int, host: bool = False) -> bool:
    """`self.<attr>` that every assignment in `__init__` binds to an array."""
    if func is None or type(e.value) is not ast.Name or e.value.id != "self":
        return False
    a = analyzer(ctx)
    cls = a.owner_class(func)
    if cls is None:
        return False
    values = a.self_values(cls).get(e.attr)  # noqa: SLF001  (as other rules read it)
    if not values:
        return False
    init = init_of(cls)
    return all(v is not None and _numpy_array(v, ctx, init, depth + 1, host) for v in values)
