"""Tensors whose shape is known only at run time, and the shape reads of them.

One model for every rule that needs it (MS131's `min`/`max` of a length, MS152's loops over a
length, MS119's loop-carried shape reads): a tensor made by a dynamic-shape operator (the
table `ms_dynamic_shape.json`), picked by a boolean mask or by an index tensor of run-time
length, or reshaped / sliced from one; a name holds one when bound once to one, when its
reaching straight-line assignment is one (`target = target[valid]`), or when it is a helper's
parameter every caller gives one. A shape read (`t.shape[0]`, `len(t)`, `t.size`,
`t.numel()`) of any other tensor is a constant while compiling.
"""

from __future__ import annotations

import ast
import functools
import json
from importlib import resources
from typing import Final

from npu_lsp.astutil import COMPREHENSIONS, self_attr
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, returns_in
from npu_lsp.scope import module_statements

_MAX_DEPTH = 5
_BLOCKS = ("body", "orelse", "finalbody")
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SHAPE_ATTRS = frozenset({"shape", "size"})


@functools.cache
def _table() -> tuple[dict[str, frozenset[int] | None], dict[str, frozenset[int] | None], frozenset[str]]:
    data = json.loads(resources.files(__package__).joinpath("ms_dynamic_shape.json").read_text("utf-8"))

    def items(table: dict[str, list[int] | None]) -> dict[str, frozenset[int] | None]:
        return {k: (frozenset(v) if v is not None else None) for k, v in table.items()}

    return items(data["functions"]), items(data["methods"]), frozenset(data["shape_keeping_methods"])


@functools.cache
def _masks() -> tuple[frozenset[str], frozenset[str]]:
    """(functions, methods) whose result is a boolean tensor, one an index uses as a mask."""
    data = json.loads(resources.files(__package__).joinpath("ms_dynamic_shape.json").read_text("utf-8"))
    return frozenset(data["mask_functions"]), frozenset(data["mask_methods"])


def _operator_items(call: ast.Call, ctx: Context) -> tuple[bool, frozenset[int] | None]:
    """(is a dynamic-shape operator, the items of its tuple result that are; None: all of it)."""
    functions, methods, _ = _table()
    q = ctx.qualname(call.func)
    if q is not None and q.startswith("mindspore."):
        if q in functions:
            return True, functions[q]
        last = f"mindspore.ops.{q.rsplit('.', 1)[-1]}"  # another path to the same function
        return (True, functions[last]) if last in functions else (False, None)
    if isinstance(call.func, ast.Attribute) and call.func.attr in methods:
        return True, methods[call.func.attr]
    return False, None


def dynamic_shape(e: ast.expr, ctx: Context, depth: int = 0, func: ast.AST | None = None) -> bool:
    """Is `e` a tensor whose shape is known only at run time? A dynamic-shape operator's
    result (`ops.nonzero(m)`, `x.masked_select(m)`, `ops.unique(x)[0]`, `u, _ = ops.unique(x)`),
    rows picked by a boolean mask or an index tensor of run-time length (`x[x > 0]`, `x[keep]`
    with `keep = s > t`, `x[nz]`), or a reshape / slice of one (`nz.reshape(-1)`, `order[1:]`);
    a name counts when bound once in the function."""
    if depth > _MAX_DEPTH:
        return False
    func = func if func is not None else ctx.function
    if isinstance(e, ast.Name):
        if func is None:
            return False
        a = analyzer(ctx)
        bound = a.single_assignment(e.id, func)
        if isinstance(bound, ast.expr):
            return dynamic_shape(bound, ctx, depth + 1, func)
        unpacked = a.single_unpacking(e.id, func)
        if unpacked is not None:
            call, path = unpacked
            hit, items = _operator_items(call, ctx)
            return hit and len(path) == 1 and (items is None or path[0] in items)
        reaching = reaching_assignment(e, ctx, func)
        if reaching is not None:
            return dynamic_shape(reaching, ctx, depth + 1, func)
        return _every_caller_passes_one(e, func, ctx, depth)
    if isinstance(e, ast.Call):
        hit, items = _operator_items(e, ctx)
        if hit:
            return items is None
        if func is not None and (_sized_at_run_time(e, ctx, func) or _joins_dynamic(e, ctx, depth, func)):
            return True
        if func is not None and (method := _self_method(e, func, ctx)) is not None:
            # `e = self.expand(x[b], d[b])`: the helper is inlined, its result is its return's
            returns = [r.value for r in returns_in(method.body) if r.value is not None]
            return bool(returns) and all(dynamic_shape(r, ctx, depth + 1, method) for r in returns)
        f = e.func
        return isinstance(f, ast.Attribute) and f.attr in _table()[2] and dynamic_shape(f.value, ctx, depth + 1, func)
    if isinstance(e, ast.Attribute) and e.attr == "T":
        return dynamic_shape(e.value, ctx, depth + 1, func)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        # `inds + 1` of `inds = ops.nonzero(m).reshape(-1)`: elementwise arithmetic with a
        # number keeps the run-time length (written/heldout18b case `det_nms_python_while`,
        # `order = order[inds + 1]` in the NMS `while`; probes `fe18b_dw_*`)
        for side, other in ((e.left, e.right), (e.right, e.left)):
            if isinstance(other, ast.Constant) and type(other.value) in (int, float):
                return dynamic_shape(side, ctx, depth + 1, func)
        return False
    if isinstance(e, ast.Subscript):
        index = e.slice
        if isinstance(index, ast.Slice):
            return dynamic_shape(e.value, ctx, depth + 1, func)  # `nz[1:]`: still a run-time length
        if isinstance(e.value, ast.Call) and isinstance(index, ast.Constant) and type(index.value) is int:
            hit, items = _operator_items(e.value, ctx)
            if hit and items is not None:
                return index.value in items  # `ops.unique(x)[0]`
        # rows picked by a mask or by an index tensor of run-time length (`x[keep]`, `x[nz]`)
        return boolean_mask(index, ctx, depth, func) or dynamic_shape(index, ctx, depth + 1, func)
    return False


def boolean_mask(e: ast.expr, ctx: Context, depth: int = 0, func: ast.AST | None = None) -> bool:
    """A comparison of tensors used as an index (`x > 0`, `(a > 0) & (b < 1)`, `~m`, or a name
    bound once to one)."""
    if depth > _MAX_DEPTH:
        return False
    func = func if func is not None else ctx.function
    if isinstance(e, ast.Compare):
        return analyzer(ctx).kind(e, func) == Kind.TENSOR
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return boolean_mask(e.left, ctx, depth + 1, func) or boolean_mask(e.right, ctx, depth + 1, func)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
        return boolean_mask(e.operand, ctx, depth + 1, func)
    if isinstance(e, ast.Call):
        return _mask_call(e, ctx)
    if isinstance(e, ast.Name) and func is not None:
        bound = analyzer(ctx).single_assignment(e.id, func)
        return isinstance(bound, ast.expr) and boolean_mask(bound, ctx, depth + 1, func)
    return False


def _mask_call(call: ast.Call, ctx: Context) -> bool:
    """A call that makes a boolean tensor (`ops.logical_and(x >= -b, x <= b)`, `ops.isnan(x)`,
    `(x > a).logical_and(x < b)`): ms_dynamic_shape.json `mask_functions` / `mask_methods`,
    each row measured (written/heldout35c probes `fix35f_mk_*`)."""
    functions, methods = _masks()
    q = ctx.qualname(call.func)
    if q is not None:
        return q in functions
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in methods and analyzer(ctx).kind(f.value) == Kind.TENSOR


def shape_read_of(e: ast.expr) -> ast.expr | None:
    """The tensor whose size `e` reads: `t.shape[i]`, `t.shape`, `t.size`, `t.numel()`, `len(t)`."""
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return e.value.value
    if isinstance(e, ast.Attribute) and e.attr in _SHAPE_ATTRS:
        return e.value
    if isinstance(e, ast.Call) and not e.args and isinstance(e.func, ast.Attribute) and e.func.attr == "numel":
        return e.func.value
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len" and len(e.args) == 1:
        return e.args[0]
    return None


def dynamic_shape_read(e: ast.expr, ctx: Context) -> bool:
    """A size read of a tensor whose shape is known only at run time: a run-time scalar
    (measured: with `idx = (x > 0).nonzero()`, `min(idx.numel(), 2)` and `min(idx.shape[0], 2)`,
    and `max(len(x[x > 0]), 1)`, are refused under STRICT; `min(x.numel(), 2)` of an input
    compiles)."""
    t = shape_read_of(e)
    return t is not None and dynamic_shape(t, ctx)


def run_time_size_test(test: ast.expr, ctx: Context, func: ast.AST | None = None) -> bool:
    """Does the condition `test` read the first dimension of a tensor whose shape is known
    only at run time (`sel.shape[0] == 0`, `len(sel)`, `sel.size`, `sel.numel()` with `sel =
    x[mask]`)? Then MindSpore does not fold it: both sides are compiled and joined
    (measured on 2.10, written/heldout17b probes `st18_dyn_*`). Another dimension is static
    and folds (`sel.shape[1] == 3`: probe `st18_dyn_mask_dim1_none` compiles under STRICT)."""
    stack = [test]
    while stack:
        e = stack.pop()
        k = type(e)
        if k is ast.Compare:
            stack.append(e.left)  # type: ignore[attr-defined]
            stack.extend(e.comparators)  # type: ignore[attr-defined]
        elif k is ast.BoolOp:
            stack.extend(e.values)  # type: ignore[attr-defined]
        elif k is ast.UnaryOp:
            stack.append(e.operand)  # type: ignore[attr-defined]
        elif k is ast.BinOp:
            stack.append(e.left)  # type: ignore[attr-defined]
            stack.append(e.right)  # type: ignore[attr-defined]
        else:
            t = _first_dim_read(e)
            if t is not None and dynamic_shape(t, ctx, 0, func):
                return True
    return False


def _first_dim_read(e: ast.AST) -> ast.expr | None:
    """The tensor whose first dimension (the one a mask, `nonzero` or `unique` leaves
    unknown) `e` reads: `t.shape[0]`, `len(t)`, `t.size`, `t.numel()`."""
    if type(e) is ast.Subscript:
        s = e.slice
        return shape_read_of(e) if type(s) is ast.Constant and s.value == 0 else None
    if type(e) is ast.Attribute:
        return e.value if e.attr == "size" else None
    if type(e) is ast.Call:
        return shape_read_of(e)
    return None


def reaching_assignment(name: ast.Name, ctx: Context, func: ast.AST | None = None) -> ast.expr | None:
    """The value of the `name = value` statement that every path reaching the read `name`
    last went through, in straight-line code: the nearest earlier statement of its block (or
    of a block around it, up to the function) that binds the name, when that is a plain
    assignment. So a rebound parameter (`target = target[valid]`, then `len(target)`) has a
    value. None when a loop around the read rebinds the name after it (a later iteration
    reads that binding), or the name is a comprehension's or lambda's own variable."""
    func = func if func is not None else ctx.function
    child: ast.AST = name
    parent = ctx.parent(name)
    while parent is not None and parent is not func:
        if isinstance(parent, (*FUNCS, ast.ClassDef)):
            return None
        if isinstance(parent, COMPREHENSIONS) and any(
            binds_name(g.target, name.id) for g in parent.generators
        ):
            return None
        found, value = _in_block_before(parent, child, name.id)
        if found:
            return value
        if isinstance(parent, _LOOPS) and binds_name(parent, name.id):
            return None  # a later iteration sees the loop's own later binding
        if isinstance(parent, ast.Try) and child not in parent.body and binds_name(parent, name.id):
            return None  # a handler or `finally` may follow any part of the `try` body
        child, parent = parent, ctx.parent(parent)
    if parent is func and parent is not None:
        return _in_block_before(parent, child, name.id)[1]
    return None


def _every_caller_passes_one(name: ast.Name, func: ast.AST, ctx: Context, depth: int) -> bool:
    """Is `name` a parameter of a module-level helper `def` that every call of it in the file
    (at least one, each inside a function) gives a tensor of run-time shape in its place?
    Measured (heldout14b probe `hb_dyn_boolidx_max_len_jitfn`): `max(len(v), 1)` in a helper
    that `construct` calls with `t[t != -100]` fails under STRICT as it does inline."""
    if not isinstance(func, ast.FunctionDef) or func not in ctx.tree.body or func.args.vararg:
        return False
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    if name.id not in params:
        return False
    at = params.index(name.id)
    calls = _calls_by_name(ctx).get(func.name, [])
    if not calls:
        return False
    for call, caller in calls:
        if caller is None or any(isinstance(x, ast.Starred) for x in call.args):
            return False
        arg = call.args[at] if at < len(call.args) else next(
            (k.value for k in call.keywords if k.arg == name.id), None
        )
        if arg is None or not dynamic_shape(arg, ctx, depth + 1, caller):
            return False
    return True


def _calls_by_name(ctx: Context) -> dict[str, list[tuple[ast.Call, ast.AST | None]]]:
    """Calls of a bare name in the file -> (the call, the function it sits in)."""
    cached = ctx.cache.get("dynamic_shape-calls")
    if isinstance(cached, dict):
        return cached
    out: dict[str, list[tuple[ast.Call, ast.AST | None]]] = {}

    def visit(node: ast.AST, fn: ast.AST | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner: ast.AST | None = fn
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = child
            elif isinstance(child, ast.Lambda):
                inner = None  # a lambda's calls are not followed
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                out.setdefault(child.func.id, []).append((child, fn))
            visit(child, inner)

    visit(ctx.tree, None)
    ctx.cache["dynamic_shape-calls"] = out
    return out


def _in_block_before(parent: ast.AST, child: ast.AST, name: str) -> tuple[bool, ast.expr | None]:
    """(a statement before `child` in `parent`'s block binds `name`, the value when the last
    such statement is `name = value`)."""
    for field in _BLOCKS:
        block = getattr(parent, field, None)
        if not (isinstance(block, list) and child in block):
            continue
        for st in reversed(block[: block.index(child)]):
            if not binds_name(st, name):
                continue
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and st.targets[0].id == name
            ):
                return True, st.value
            return True, None
    return False, None


def binds_name(node: ast.AST, name: str) -> bool:
    """Does `node` (a statement, a target) bind `name` anywhere, nested blocks included?"""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            return True
        if isinstance(n, ast.ExceptHandler) and n.name == name:
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
            (al.asname or al.name.split(".")[0]) == name for al in n.names
        ):
            return True
    return False


# ------------------------------------------------------------------ declared dynamic inputs
#: a size read of every dimension at once (`x.shape`, `x.size`, `x.numel()`)
_ANY_DIM = "any"
#: how far a run-time size is followed through names and helper parameters
_SIZE_DEPTH = 4


def declared_dynamic_read(e: ast.expr, ctx: Context, func: ast.AST | None = None, line: int | None = None) -> bool:
    """Is `e` a size read (`x.shape[0]`, `x.shape[-1]`, `len(x)`, `x.shape`, `x.size`,
    `x.numel()`) of an input of `construct` at a dimension the file declares unknown with
    `net.set_inputs(Tensor(shape=[None, 4], dtype=...))`, the network being called from
    Python (not from a compiled function, where `set_inputs` is not used)? Such a size is a
    run-time scalar: measured on 2.10 (written/heldout25a `dyn_numpy_zeros_shape`,
    `r2_dyn_numpy_ones_from_batch`, probes `fix25c_dyn_*`), `np.zeros((x.shape[0], 4))`,
    `np.arange`, `math.sqrt`, `Tensor(x.shape[0])` of it are refused under STRICT ("the
    inputs should be constant, but found variable '__input_0__'"); a declared dimension
    (`x.shape[1]` of `[None, 4]`), the same network called inside `@ms.jit`, `ops.zeros`
    and Python arithmetic on the size compile. With `line`, the read sits on that line, and
    the input may be bound again after it (`h, w = x.shape[-2:]`, then `x = f(x)`)."""
    if not ctx.mentions("set_inputs"):
        return False
    read = size_read(e)
    if read is None:
        return False
    t, dim = read
    func = func if func is not None else ctx.function
    if not (isinstance(t, ast.Name) and isinstance(func, ast.FunctionDef) and func.name == "construct"):
        return False
    cls = analyzer(ctx).owner_class(func)
    declared = declared_inputs(ctx).get(cls.name) if cls is not None else None
    if not declared:
        return False
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)][1:]
    if t.id not in params:
        return False
    first = analyzer(ctx).first_binding_line(t.id, func)
    # `x = self.stage0(x)`: the call on the line that binds `x` again reads the input
    if first is not None and (line is None or first < line):
        return False
    at = params.index(t.id)
    shape = declared[at] if at < len(declared) else None
    if shape is None:
        return False
    if dim == _ANY_DIM:
        return None in shape
    assert isinstance(dim, int)
    return -len(shape) <= dim < len(shape) and shape[dim] is None


def declared_dynamic_read_in_method(e: ast.expr, ctx: Context, func: ast.AST | None = None) -> bool:
    """`declared_dynamic_read`, also in a method of the cell whose parameter every
    `self.<method>(...)` call in `construct` gives an input `construct` has not bound again
    before the call (`x = self.stage0(x)` first in `construct`, `tuple(x.shape)` in
    `stage0`): the method is inlined, so the size is as unknown there. Measured, difftest
    seed 12000128 and written/lax probes `fix32f_dynkey_*` (a dict key)."""
    func = func if func is not None else ctx.function
    if declared_dynamic_read(e, ctx, func):
        return True
    read = size_read(e)
    if read is None or not isinstance(read[0], ast.Name) or not isinstance(func, ast.FunctionDef):
        return False
    name = read[0].id
    a = analyzer(ctx)
    cls = a.owner_class(func)
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)][1:]
    if cls is None or func.name == "construct" or name not in params:
        return False
    first = a.first_binding_line(name, func)
    if first is not None and first < getattr(e, "lineno", first):
        return False  # the method binds the parameter again before the read
    sites = _self_calls(cls, ctx).get(func.name, []) + _held_object_calls(cls, ctx).get(func.name, [])
    at = params.index(name)
    for call, caller in sites:
        starred = any(isinstance(x, ast.Starred) for x in call.args)
        arg = call.args[at] if at < len(call.args) and not starred else None
        if not (isinstance(arg, ast.Name) and isinstance(caller, ast.FunctionDef) and caller.name == "construct"):
            return False
        if not declared_dynamic_read(_with_tensor(e, arg), ctx, caller, line=call.lineno):
            return False
    return bool(sites)


def _with_tensor(read: ast.expr, tensor: ast.Name) -> ast.expr:
    """The size read `read` of another tensor: `x.shape[0]` -> `inputs.shape[0]`."""
    other = ast.Name(id=tensor.id, ctx=ast.Load())
    if isinstance(read, ast.Subscript) and isinstance(read.value, ast.Attribute):
        shape = ast.Attribute(value=other, attr=read.value.attr, ctx=ast.Load())
        return ast.Subscript(value=shape, slice=read.slice, ctx=ast.Load())
    if isinstance(read, ast.Attribute):
        return ast.Attribute(value=other, attr=read.attr, ctx=ast.Load())
    if isinstance(read, ast.Call) and isinstance(read.func, ast.Attribute):
        return ast.Call(func=ast.Attribute(value=other, attr=read.func.attr, ctx=ast.Load()), args=[], keywords=[])
    return ast.Call(func=ast.Name(id="len", ctx=ast.Load()), args=[other], keywords=[])


def run_time_size(e: ast.expr, ctx: Context, func: ast.AST | None = None, depth: int = 0) -> bool:
    """Does `e` mention the size of a tensor known only at run time (`dynamic_shape_read`,
    `declared_dynamic_read`), directly, through names bound once to an expression that does
    (`n = x.shape[-1]`, `pad = (4 - n % 4) % 4`), or through a parameter of a method of the
    cell or a module function that every call in the file gives one (`self._pad(x.shape[0])`;
    measured, probe `fix25c_dyn_np_in_helper_method`)?"""
    func = func if func is not None else ctx.function
    if depth > _SIZE_DEPTH or func is None:
        return False
    a = analyzer(ctx)
    stack: list[ast.AST] = [e]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.Name):
            bound = a.single_assignment(sub.id, func)
            if isinstance(bound, ast.expr):
                if run_time_size(bound, ctx, func, depth + 1):
                    return True
            elif _unpacked_size_is_run_time(sub.id, func, ctx) or _every_call_gives_size(sub.id, func, ctx, depth):
                return True
            continue
        if isinstance(sub, ast.expr) and size_read(sub) is not None:
            # the read as a whole: `x.shape[1]` is not the whole `x.shape` it contains
            if dynamic_shape_read(sub, ctx) or declared_dynamic_read(sub, ctx, func):
                return True
            continue
        stack.extend(ast.iter_child_nodes(sub))
    return False


def _unpacked_size_is_run_time(name: str, func: ast.AST, ctx: Context) -> bool:
    """`h, w = x.shape[-2:]` (or `b, c, h, w = x.shape`) as `name`'s only binding in `func`:
    is the dimension `name` receives known only at run time (a declared `None` dimension of
    an input, or any dimension of a dynamic-shape tensor)? Measured, written/heldout29b case
    `dyn_set_inputs_interpolate_scale` (`h, w = x.shape[-2:]` of `[1, 3, None, None]`)."""
    value = analyzer(ctx).single_unpacked(name, func)
    if value is None:
        return False
    lower = 0
    shape = value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        sl = value.slice
        if sl.step is not None or sl.upper is not None:
            return False
        start = _int_constant(sl.lower) if sl.lower is not None else 0
        if start is None:
            return False
        lower, shape = start, value.value
    if not (isinstance(shape, ast.Attribute) and shape.attr == "shape"):
        return False
    target = next(
        (
            n.targets[0]
            for n in ast.walk(func)
            if isinstance(n, ast.Assign) and n.value is value and len(n.targets) == 1
        ),
        None,
    )
    if not isinstance(target, (ast.Tuple, ast.List)) or any(not isinstance(t, ast.Name) for t in target.elts):
        return False
    names = [t.id for t in target.elts if isinstance(t, ast.Name)]
    dim = lower + names.index(name)
    if lower < 0 and dim >= 0:
        return False
    tensor = shape.value
    if dynamic_shape(tensor, ctx, 0, func):
        return True
    read = ast.Subscript(value=shape, slice=ast.Constant(dim), ctx=ast.Load())
    return declared_dynamic_read(read, ctx, func, value.lineno)


def size_read(e: ast.expr) -> tuple[ast.expr, int | str] | None:
    """(the tensor, the dimension read or `_ANY_DIM`) of a size read."""
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        i = _int_constant(e.slice)
        return (e.value.value, i) if i is not None else None
    if isinstance(e, ast.Attribute) and e.attr in _SHAPE_ATTRS:
        return e.value, _ANY_DIM
    if isinstance(e, ast.Call) and not e.args and isinstance(e.func, ast.Attribute) and e.func.attr == "numel":
        return e.func.value, _ANY_DIM
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len" and len(e.args) == 1:
        return e.args[0], 0
    return None


def _int_constant(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _int_constant(e.operand)
        return -inner if inner is not None else None
    return None


def _every_call_gives_size(name: str, func: ast.AST, ctx: Context, depth: int) -> bool:
    """Is `name` a parameter of `func`, a method called as `self.<func>(...)` in its class or
    a module function called by name, that every such call (at least one) gives an argument
    mentioning a run-time size?"""
    if not isinstance(func, ast.FunctionDef) or func.args.vararg:
        return False
    params = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
    if name not in params:
        return False
    cls = analyzer(ctx).owner_class(func)
    sites: list[tuple[ast.Call, ast.AST | None]]
    if cls is not None:
        params = params[1:]
        if name not in params:
            return False
        sites = list(_self_calls(cls, ctx).get(func.name, ()))
    elif func in ctx.tree.body:
        sites = _calls_by_name(ctx).get(func.name, [])
    else:
        return False
    if not sites:
        return False
    at = params.index(name)
    for call, caller in sites:
        if caller is None or any(isinstance(x, ast.Starred) for x in call.args):
            return False
        arg = call.args[at] if at < len(call.args) else next((k.value for k in call.keywords if k.arg == name), None)
        if arg is None or not run_time_size(arg, ctx, caller, depth + 1):
            return False
    return True


def _self_calls(cls: ast.ClassDef, ctx: Context) -> dict[str, list[tuple[ast.Call, ast.AST]]]:
    """`self.<method>(...)` calls in the methods of `cls` -> (the call, the method it sits in)."""
    key = ("dynamic_shape-self-calls", id(cls))
    cached = ctx.cache.get(key)
    if isinstance(cached, dict):
        return cached
    out: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
    for method in cls.body:
        if not isinstance(method, ast.FunctionDef):
            continue
        for n in ast.walk(method):
            f = n.func if isinstance(n, ast.Call) else None
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
                out.setdefault(f.attr, []).append((n, method))  # type: ignore[arg-type]
    ctx.cache[key] = out
    return out


def _held_object_calls(cls: ast.ClassDef, ctx: Context) -> dict[str, list[tuple[ast.Call, ast.AST]]]:
    """`self.<attr>.<method>(...)` calls in the methods of the file's classes whose `__init__`
    binds `self.<attr>` only to `Cls()` (`self.stage0 = Stage0()`, an `@ms.jit_class` object
    or a plain one, whose methods compiled code inlines) -> (the call, the method it sits
    in). Measured (written/lax probes `genfresh34_dy_jitclass_*`, difftest v6 seed
    12000528): a `for` over an input of `construct` with a dimension `set_inputs` declares
    `None`, in such a method, runs no turn as in `construct` itself."""
    key = ("dynamic_shape-held-calls", id(cls))
    cached = ctx.cache.get(key)
    if isinstance(cached, dict):
        return cached
    out: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
    a = analyzer(ctx)
    for holder in ctx.tree.body:
        if not isinstance(holder, ast.ClassDef):
            continue
        held = {
            attr
            for attr, values in a.self_values(holder).items()
            if len(values) == 1
            and isinstance(values[0], ast.Call)
            and isinstance(values[0].func, ast.Name)
            and values[0].func.id == cls.name
        }
        if not held:
            continue
        for method in holder.body:
            if not isinstance(method, ast.FunctionDef):
                continue
            for n in ast.walk(method):
                f = n.func if isinstance(n, ast.Call) else None
                if isinstance(f, ast.Attribute) and self_attr(f.value) in held:
                    out.setdefault(f.attr, []).append((n, method))  # type: ignore[arg-type]
    ctx.cache[key] = out
    return out


def declared_inputs(ctx: Context) -> dict[str, list[tuple[int | None, ...] | None]]:
    """Class name -> the shapes its instances' `set_inputs(...)` declare, one per input of
    `construct` (None where not a `Tensor(shape=...)` display), for instances the file calls
    only from Python. Measured (probe `fix25c_dyn_set_inputs_jit_wrapped`): a network given
    `set_inputs` but called inside an `@ms.jit` function is compiled for the shapes it is
    called with, and `np.zeros((x.shape[0], 4))` compiles under STRICT."""
    cached = ctx.cache.get("dynamic_shape-declared")
    if isinstance(cached, dict):
        return cached
    out: dict[str, list[tuple[int | None, ...] | None]] = {}
    info = ctx.scopes.info
    for st in module_statements(ctx.tree):
        call = st.value if isinstance(st, ast.Expr) else None
        f = call.func if isinstance(call, ast.Call) else None
        if not (isinstance(call, ast.Call) and isinstance(f, ast.Attribute) and f.attr == "set_inputs"):
            continue
        if not isinstance(f.value, ast.Name) or any(isinstance(x, ast.Starred) for x in call.args):
            continue
        cls = (info.instances.get(f.value.id) or "").rsplit(".", 1)[-1]
        if cls not in info.classes or _called_in_graph(f.value.id, ctx):
            continue
        out[cls] = [_declared_shape(x, ctx) for x in call.args]
    ctx.cache["dynamic_shape-declared"] = out
    return out


def _declared_shape(e: ast.expr, ctx: Context) -> tuple[int | None, ...] | None:
    """`Tensor(shape=[None, 4], dtype=ms.float32)` -> (None, 4)."""
    if not isinstance(e, ast.Call) or (ctx.qualname(e.func) or "").rsplit(".", 1)[-1] not in ("Tensor", "tensor"):
        return None
    shape = next((k.value for k in e.keywords if k.arg == "shape"), None)
    if not isinstance(shape, (ast.List, ast.Tuple)):
        return None
    dims: list[int | None] = []
    for d in shape.elts:
        if isinstance(d, ast.Constant) and (d.value is None or type(d.value) is int):
            dims.append(d.value)
        else:
            return None
    return tuple(dims)


def _called_in_graph(name: str, ctx: Context) -> bool:
    """Does a compiled function of the file read the module-level `name`?"""
    for scope in ctx.scopes.scopes.values():
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(scope.function)):
            return True
    return False


#: calls whose result's shape is a size tuple argument (method name or `mindspore.ops`
#: function -> the argument's position); a run-time scalar in it (`int(t)`, `t.item()`) makes
#: the result's shape known only at run time (measured, written/heldout35a case
#: `fs2_length_regulator_batch_loop_pad`, probes `fix37b_lr_*`: `ms.Tensor([e.shape[0]])` of
#: `e = v.broadcast_to((int(n), 4))`, `ops.tile(v, (int(n), 1))`, `ops.zeros((int(n), 4))` is
#: refused under STRICT, "the inputs should be constant, but found variable"; a constant
#: size compiles)
_SIZED_METHODS: Final = {"broadcast_to": 0}
_SIZED_FUNCTIONS: Final = {"mindspore.ops.broadcast_to": 1, "mindspore.ops.tile": 1, "mindspore.ops.zeros": 0}
#: joins whose result's length is the sum of its parts' (or their count)
_JOINS: Final = frozenset({"mindspore.ops.cat", "mindspore.ops.concat", "mindspore.ops.stack"})


def _sized_at_run_time(call: ast.Call, ctx: Context, func: ast.AST) -> bool:
    f = call.func
    at: int | None
    if isinstance(f, ast.Attribute) and f.attr in _SIZED_METHODS and ctx.qualname(f) is None:
        at = _SIZED_METHODS[f.attr]
    else:
        at = _SIZED_FUNCTIONS.get(ctx.qualname(f) or "")
    if at is None or at >= len(call.args):
        return False
    size = call.args[at]
    return isinstance(size, (ast.Tuple, ast.List)) and any(_tensor_number(d, ctx, func) for d in size.elts)


def _tensor_number(e: ast.expr, ctx: Context, func: ast.AST) -> bool:
    """`int(t)` / `t.item()` of a graph tensor: a number known only at run time."""
    if not isinstance(e, ast.Call):
        return False
    a = analyzer(ctx)
    if isinstance(e.func, ast.Name) and e.func.id == "int" and len(e.args) == 1:
        return a.kind(e.args[0], func) == Kind.TENSOR
    if isinstance(e.func, ast.Attribute) and e.func.attr == "item" and not e.args:
        return a.kind(e.func.value, func) == Kind.TENSOR
    return False


def _joins_dynamic(call: ast.Call, ctx: Context, depth: int, func: ast.AST) -> bool:
    """`ops.cat(out)` of a list (a display, or a name whose appends are) holding a tensor of
    run-time shape (measured, probe `fix37b_lr_helper_cat_shape_tensor`)."""
    if ctx.qualname(call.func) not in _JOINS or not call.args:
        return False
    parts = call.args[0]
    if isinstance(parts, (ast.List, ast.Tuple)):
        return any(dynamic_shape(p, ctx, depth + 1, func) for p in parts.elts)
    if isinstance(parts, ast.Name):
        added = [c.args[0] for c in analyzer(ctx).changes(parts.id, func) if c.how == "append" and len(c.args) == 1]
        return any(dynamic_shape(p, ctx, depth + 1, func) for p in added)
    return False


def _self_method(call: ast.Call, func: ast.AST, ctx: Context) -> ast.FunctionDef | None:
    """The method of `func`'s class that `self.<name>(...)` calls (not `construct`)."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"):
        return None
    cls = analyzer(ctx).owner_class(func) if isinstance(func, ast.FunctionDef) else None
    if cls is None:
        return None
    return next(
        (m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == f.attr and m.name != "construct"),
        None,
    )


def run_time_test(test: ast.expr, a: Analyzer, ctx: Context) -> bool:
    """Is the `if` on `test` a branch of the graph rather than folded while compiling: a
    tensor or run-time value, or a size read of a tensor whose shape is known only at run
    time (`sel.shape[0] == 0`, `len(sel)`, `sel.size` with `sel = x[mask]`: measured on 2.10,
    written/heldout17b probes `st18_dyn_*`, "Cannot join the return values of different
    branches" for `return main, None` beside `return main, aux` under STRICT, and for a
    Python float beside a tensor under both levels; a static slice there folds)."""
    return a.kind(test).dynamic or run_time_size_test(test, ctx)
