"""MS207: the gradient with respect to a constant tensor, used as a tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.differentiated_function_called_again import (
    applied_at,
    grad_operation,
    module_builder,
)
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names, own_nodes
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS

#: the builders whose gradient is the first input's by default (`ms.grad`, `ops.grad`)
_BUILDERS = frozenset({"grad"})
#: the builders taking `grad_position` (second argument) and `weights` (third)
_POSITIONED = frozenset({"grad", "value_and_grad"})
#: tensor constructors from host data, and creators MindSpore folds on constant arguments
_TENSORS = frozenset({"Tensor", "tensor"})
_CREATORS = frozenset({"ones", "zeros", "full", "eye", "ones_like", "zeros_like"})
_DEPTH = 12


@rule(code="MS207", name="gradient-of-constant-input", severity="error", family="graphmode")
class GradientOfConstantInput(GraphRule):
    """## What it does
    Flags the gradient of a function or cell with respect to an input that is a constant of
    the graph, when it is then used as a tensor (a method or attribute of it, arithmetic
    with it): `du = self.grad(self.net)(x)` with `x = ms.Tensor(np.random.rand(64, 2))`
    sampled in `construct`, a tensor held on `self` (`self.pts = Tensor(...)` in
    `__init__`), a module-level tensor, `ms.Tensor(self.pts)` / `ms.Tensor(PTS)` of numpy data
    held on the cell or at module level, or `ops.ones(...)`, then `du.sum(axis=1)`,
    `x - 0.1 * du` or `du[:, 0:1]`. The gradient is taken by `ops.GradOperation()` (without `get_all` /
    `get_by_list`), `ms.grad(fn)` or `ops.grad(fn)` (first input, no weights). Also
    `ms.grad` / `ms.value_and_grad` given `grad_position` (an int or a tuple of ints) and
    maybe weights, built in place or at module level, when every input it names is such a
    constant (a module-level tensor read through `global` too): the inputs' gradient is then
    an empty tuple, and indexing it (`g_delta[0]`), a method of it, arithmetic or an `ops`
    function given it (`ops.sign(g_delta)`) fails.

    ## Why is this bad?
    MindSpore 2.10 differentiates only graph variables: a tensor known while compiling is a
    constant of the graph, its gradient is not a tensor but a tuple, and using it as one
    stops compiling at every syntax level (`AttributeError: 'Tuple' object has no attribute
    'sum'`, `TypeError: can't multiply sequence by non-int of type float`, `tuple indices
    must be integers or slices, not tuple`). The rule: the
    gradient with respect to a compile-time constant input is a tuple.

    ## Example
    ```python
    def construct(self, scale):
        x = ms.Tensor(np.random.rand(64, 2).astype(np.float32))
        du = self.grad(self.net)(x)
        return du.sum(axis=1).mean() * scale
    ```

    ## Use instead
    Sample the points outside the network and pass them in as an input:
    ```python
    def construct(self, x, scale):
        du = self.grad(self.net)(x)
        return du.sum(axis=1).mean() * scale
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout20a`
      (`pinn_poisson_collocation_numpy_sample`) and its probes `cgrad_*`: the gradient of a
      `SequentialCell` with respect to `ms.Tensor(np.random.rand(...))`,
      `ms.Tensor(np.ones(...))`, `ops.ones(...)`, a tensor attribute of `self`, a
      module-level tensor (`GradOperation()`, `ms.grad`, `ops.grad` in an `@ms.jit`
      function; of a method; with respect to the first of two inputs) is rejected once
      `.sum()`, `0.1 * g` or `g[:, 0:1]` uses it; returning it compiles, and so do the
      gradient with respect to `x + ms.Tensor(np.ones(...))` for a graph input `x` and with
      respect to a `Parameter` held on `self` (`requires_grad=False`).
    - `grad_position`: written set `heldout39b` (`advtrain_free_adv_global_delta`,
      `r2_advtrain_free_grad_position_int`) and its probes `fix39e_gp_*`: a module-level
      tensor (also `global`) or `ms.Tensor(np.zeros(...))` made in the jit, at position 1 or
      (1,), with or without weights, `ms.grad` and `ms.value_and_grad`: "TupleGetItem, cannot
      get item by index from an empty sequence", `Failed calling Sign with "input=Tuple[]"`,
      "'Tuple' object has no attribute 'sum'" at LAX and STRICT; the gradient returned,
      position (0, 1) with a graph input at 0, a `Parameter` and `x * 0.0` compile.
    - Written set `heldout43b` (`r2_collocation_numpy_attr_tensor_then_grad`) and its probes
      `h43b_ca_*`: `self.grad(self.net)(Tensor(self.pts))` with `self.pts` numpy data built
      in `__init__` (also `Tensor(self.pts, ms.float32)`), or `Tensor(PTS)` of a module-level
      numpy array, then `g.sum(axis=1)`, is rejected at LAX and STRICT ("'Tuple' object has
      no attribute 'sum'"); `self.net(Tensor(self.pts))` without a gradient compiles.
    """

    nodes = (ast.Call,)
    words = ("grad", "GradOperation")

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        return callee is ast.Call or callee is ast.Name or (callee is ast.Attribute and (called in _POSITIONED or receiver == "self"))

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda):
            return ()
        f = node.func
        if isinstance(f, ast.Name) and f.id not in _POSITIONED:
            found = self._module_builder_applied(node, func, ctx)
            if found is not None:
                return found
        if not node.args:
            return ()
        operation = grad_operation(f, func, ctx)
        if operation is not None:
            if any(k.arg in ("get_all", "get_by_list") for k in operation.keywords) or operation.args:
                return ()
        else:
            q = ctx.qualname(f) or ""
            if q.split(".")[0] != "mindspore":
                return ()
            if q.rsplit(".", 1)[-1] in _POSITIONED and (len(node.args) > 1 or node.keywords or q.rsplit(".", 1)[-1] != "grad"):
                applied = applied_at(node, func, ctx)
                return self._positioned(node, applied, func, ctx) if applied is not None else ()
            if q.rsplit(".", 1)[-1] not in _BUILDERS:
                return ()
            if len(node.args) > 1 or any(k.arg not in ("has_aux",) for k in node.keywords):
                return ()  # a grad position or weights given
        applied = applied_at(node, func, ctx)
        if applied is None or not applied.args or isinstance(applied.args[0], ast.Starred):
            return ()
        if not _constant_tensor(applied.args[0], func, ctx, 0):
            return ()
        use = _tensor_use(applied, func, ctx)
        if use is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                use,
                f"`{ctx.segment(applied.args[0])}` is a constant of the graph (a tensor known while compiling), so its gradient is a tuple, not a tensor: using it as one fails to compile ('Tuple' object has no attribute ...); pass the points into the network as an input",
            )
        ]

    def _module_builder_applied(self, node: ast.Call, func: ast.AST, ctx: Context) -> list[Diagnostic] | None:
        """`vg(x, delta, y)` in compiled code with `vg = ms.value_and_grad(loss_fn, (1,),
        weights)` (or `ms.grad` given a position) built at module level."""
        assert isinstance(node.func, ast.Name)
        builder = module_builder(node.func.id, ctx)
        if builder is None:
            return None
        q = ctx.qualname(builder.func) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _POSITIONED:
            return None
        if node.func.id in bound_names(func, ctx):
            return []
        return self._positioned(builder, node, func, ctx)

    def _positioned(self, builder: ast.Call, applied: ast.Call, func: ast.AST, ctx: Context) -> list[Diagnostic]:
        """`ms.grad` / `ms.value_and_grad` with the inputs it differentiates named by
        `grad_position` (an int or a tuple of ints, 0 by default) and maybe weights: when
        every input differentiated is a constant of the graph, their gradient is an empty
        tuple. Measured (written/heldout39b cases `advtrain_free_adv_global_delta`,
        `r2_advtrain_free_grad_position_int`, probes `fix39e_gp_*`, LAX and STRICT): a
        module-level tensor (read through `global` too) or `ms.Tensor(np.zeros(...))` made
        in the jit, differentiated at position 1 or (1,), with or without weights: indexing
        the inputs' gradient fails ("TupleGetItem, cannot get item by index from an empty
        sequence"), so does an ops function or a method given it ("Failed calling Sign with
        input=Tuple[]", "'Tuple' object has no attribute 'sum'"); returning it compiles, and
        so do position (0, 1) with a graph input at 0, a `Parameter`, and `x * 0.0`."""
        positions = _grad_positions(builder)
        if positions is None or any(isinstance(a, ast.Starred) for a in applied.args):
            return []
        many, indices = positions
        if not indices or max(indices) >= len(applied.args):
            return []
        args = [applied.args[i] for i in indices]
        if not all(_constant_tensor(a, func, ctx, 0) for a in args):
            return []
        value = _input_gradient(applied, builder, ctx)
        if value is None:
            return []
        use = _empty_tuple_use(value, many, func, ctx)
        if use is None:
            return []
        names = ", ".join(f"`{ctx.segment(a)}`" for a in args)
        return [
            ctx.diagnostic(
                self,
                use,
                f"{names} {'are constants' if len(args) > 1 else 'is a constant'} of the graph (a tensor known while compiling), so the gradient with respect to {'them' if len(args) > 1 else 'it'} is an empty tuple, not a tensor: "
                "using it fails to compile (`cannot get item by index from an empty sequence`, `Failed calling ... with \"input=Tuple[]\"`); pass the tensor into the compiled function as an input (and return its new value) instead of reading a global",
            )
        ]


def _tensor_use(applied: ast.Call, func: ast.AST, ctx: Context) -> ast.expr | None:
    """Where the gradient `applied` returns is used as a tensor: an attribute of it, or
    arithmetic with it (not with an int, which repeats a tuple), an index of several axes,
    directly or through a local bound once to it."""
    used = _as_tensor(applied, func, ctx)
    if used is not None:
        return used
    parent = ctx.parent(applied)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return None
    name = parent.targets[0].id
    if analyzer(ctx).single_assignment(name, func) is not applied:
        return None
    for n in own_nodes(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            used = _as_tensor(n, func, ctx)
            if used is not None:
                return used
    return None


#: the arithmetic MindSpore 2.10 defines between a tuple and a tensor (`sub_impl.py`,
#: `add_impl.py`, `mul_impl.py`, `div_impl.py` register ("Tuple", "Tensor") and
#: ("Tensor", "Tuple")): the tuple is made a tensor, so the expression compiles
_TUPLE_TENSOR_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _as_tensor(e: ast.expr, func: ast.AST, ctx: Context) -> ast.expr | None:
    parent = ctx.parent(e)
    if isinstance(parent, ast.Attribute) and parent.value is e and parent.attr not in ("count", "index"):
        return parent
    if isinstance(parent, ast.Subscript) and parent.value is e and isinstance(parent.slice, ast.Tuple):
        return parent  # `du[:, 0:1]`: "tuple indices must be integers or slices, not tuple"
    if isinstance(parent, ast.BinOp):
        other = parent.right if parent.left is e else parent.left
        if isinstance(other, ast.Constant) and isinstance(other.value, int):
            return None
        if isinstance(parent.op, _TUPLE_TENSOR_OPS) and isinstance(values(ctx).of(other, func), av.Tensor):
            # measured (heldout30b `pinn_collocation_resample_numpy_in_construct`: `u_x - 2 * x`
            # with `x` the constant tensor compiles at both levels): the tuple becomes a tensor
            return None
        return parent
    return None


def _constant_tensor(e: ast.expr, func: ast.AST, ctx: Context, depth: int) -> bool:
    """Is `e` a tensor known while compiling: built from host data (`ms.Tensor(np...)`),
    folded (`ops.ones((8, 2))`), a tensor held on `self` or at module level, or what a
    method without arguments returns of those?"""
    if depth > _DEPTH:
        return False
    if isinstance(e, ast.Name):
        declared = e.id in _globals(func)
        bound = None if declared else analyzer(ctx).single_assignment(e.id, func)
        if bound is not None:
            return _constant_tensor(bound, func, ctx, depth + 1)
        if not declared and (e.id in _params(func) or e.id in _bound_here(func)):
            return False
        value = constructed.built(e, None, ctx)
        return value is not None and _tensor_call(value, None, ctx, depth + 1)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(func)
        held = a.self_values(cls).get(e.attr, []) if cls is not None else []
        init = constructed.init_of(cls) if cls is not None else None
        return len(held) == 1 and held[0] is not None and init is not None and _tensor_call(held[0], init, ctx, depth + 1)
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and not e.args and not e.keywords:
            cls = analyzer(ctx).owner_class(func)
            method = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == f.attr), None) if cls else None
            if method is None:
                return False
            rets = [r.value for r in ast.walk(method) if isinstance(r, ast.Return)]
            return bool(rets) and all(r is not None and _constant_tensor(r, method, ctx, depth + 1) for r in rets)
        return _tensor_call(e, func, ctx, depth + 1)
    return False


def _tensor_call(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int) -> bool:
    """`ms.Tensor(<host data>)` or a folded creator on host arguments."""
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    if q.split(".")[0] != "mindspore":
        return False
    last = q.rsplit(".", 1)[-1]
    if last not in _TENSORS and last not in _CREATORS:
        return False
    if last in _TENSORS and q not in TENSOR_MAKERS:
        return False
    args = [*e.args, *(k.value for k in e.keywords)]
    return bool(args) and all(_host(a, where, ctx, depth + 1) for a in args)


def _host(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int) -> bool:
    """Is `e` host data known while compiling: literals, numpy (random sampling included:
    JIT Fallback runs it while compiling), static shapes, host attributes of `self`?"""
    if depth > _DEPTH:
        return False
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, (ast.List, ast.Tuple)):
        return all(_host(x, where, ctx, depth + 1) for x in e.elts)
    if isinstance(e, ast.UnaryOp):
        return _host(e.operand, where, ctx, depth + 1)
    if isinstance(e, ast.BinOp):
        return _host(e.left, where, ctx, depth + 1) and _host(e.right, where, ctx, depth + 1)
    if isinstance(e, ast.Name):
        if where is None:
            value = constructed.built(e, None, ctx)
            return value is not None and _host(value, None, ctx, depth + 1)
        bound = analyzer(ctx).single_assignment(e.id, where)
        if bound is None and e.id not in _params(where) and e.id not in _bound_here(where):
            # a module-level name read in the function (`Tensor(PTS)` with `PTS = np.random.rand(...)`):
            # the graph reads its value while compiling (measured, heldout43b `h43b_ca_global_numpy_tensor_grad`)
            value = constructed.built(e, None, ctx)
            return value is not None and _host(value, None, ctx, depth + 1)
        return bound is not None and _host(bound, where, ctx, depth + 1)
    if isinstance(e, ast.Attribute):
        q = ctx.qualname(e) or ""
        if q.startswith(("numpy.", "mindspore.")):
            return True  # np.pi, np.float32, ms.float32
        if e.attr in ("shape", "ndim", "dtype"):
            return True  # static shapes are constants
        if isinstance(e.value, ast.Name) and e.value.id == "self" and where is not None:
            return _host_attribute(e.attr, where, ctx)
        return _host(e.value, where, ctx, depth + 1) if isinstance(e.value, ast.Call) else False
    if isinstance(e, ast.Subscript):
        return _host(e.value, where, ctx, depth + 1) and _host(e.slice, where, ctx, depth + 1)
    if isinstance(e, ast.Call):
        args = [*e.args, *(k.value for k in e.keywords)]
        q = ctx.qualname(e.func) or ""
        if q.startswith("numpy."):
            return all(_host(a, where, ctx, depth + 1) for a in args)
        f = e.func
        if isinstance(f, ast.Attribute) and q == "" and isinstance(f.value, (ast.Call, ast.Name, ast.Subscript)):
            # `.astype(np.float32)`, `.reshape(-1, 1)` on host data
            return _host(f.value, where, ctx, depth + 1) and all(_host(a, where, ctx, depth + 1) for a in args)
        return False
    return False


def _params(func: ast.AST) -> set[str]:
    a = getattr(func, "args", None)
    if a is None:
        return set()
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)} | {p.arg for p in (a.vararg, a.kwarg) if p is not None}


def _globals(func: ast.AST) -> set[str]:
    """Names `func` declares `global`: read there, they are the module's values (a tensor
    bound at module level stays a constant of the graph even when the function rebinds it)."""
    return {name for n in own_nodes(func) if isinstance(n, ast.Global) for name in n.names}


def _bound_here(func: ast.AST) -> set[str]:
    return {n.id for n in own_nodes(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _host_attribute(attr: str, where: ast.AST, ctx: Context) -> bool:
    """`self.<attr>` a Python number of the cell: `__init__` binds it only to literals or to
    parameters whose default is a literal (`self.n = n` with `n=64`)."""
    a = analyzer(ctx)
    cls = a.owner_class(where)
    init = constructed.init_of(cls) if cls is not None else None
    held = a.self_values(cls).get(attr, []) if cls is not None else []
    if init is None or not held:
        return False
    if len(held) == 1 and isinstance(held[0], ast.Call) and cls is not None:
        # numpy data held on the cell (`self.pts = np.random.rand(16, 2).astype(np.float32)`), stored
        # nowhere else: a constant while compiling (measured, heldout43b `h43b_ca_numpy_attr_*`)
        return not _stored_outside_init(attr, cls) and _host(held[0], init, ctx, _DEPTH - 4)
    args = init.args
    names = [p.arg for p in (*args.posonlyargs, *args.args)]
    defaults = dict(zip(names[len(names) - len(args.defaults) :], args.defaults, strict=True))
    return all(
        isinstance(v, ast.Constant)
        or (isinstance(v, ast.Name) and isinstance(defaults.get(v.id), ast.Constant) and not _rebound(v.id, init))
        for v in held
    )


def _stored_outside_init(attr: str, cls: ast.ClassDef) -> bool:
    """Does a method of `cls` other than `__init__` store `self.<attr>`?"""
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name != "__init__":
            for n in ast.walk(item):
                if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, ast.Store):
                    return True
    return False


def _rebound(name: str, init: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(init))


def _argument(builder: ast.Call, index: int, keyword: str) -> tuple[bool, ast.expr | None]:
    """(given, value) of a builder's argument by position or keyword."""
    if len(builder.args) > index:
        return True, builder.args[index]
    kw = next((k for k in builder.keywords if k.arg == keyword), None)
    return (kw is not None, kw.value if kw is not None else None)


def _grad_positions(builder: ast.Call) -> tuple[bool, list[int]] | None:
    """(a tuple of positions?, the input positions) `grad_position` names: 0 by default, an
    int, or a tuple of int literals; None when not known or None (weights only)."""
    if any(isinstance(a, ast.Starred) for a in builder.args) or any(k.arg is None for k in builder.keywords):
        return None
    given, pos = _argument(builder, 1, "grad_position")
    if not given:
        return False, [0]
    if isinstance(pos, ast.Constant) and type(pos.value) is int:
        return False, [pos.value]
    if isinstance(pos, ast.Tuple) and pos.elts and all(isinstance(e, ast.Constant) and type(e.value) is int for e in pos.elts):
        return True, [e.value for e in pos.elts]  # type: ignore[attr-defined]
    return None


def _input_gradient(applied: ast.Call, builder: ast.Call, ctx: Context) -> ast.Name | None:
    """The name bound to the inputs' gradient from the call `applied` of `builder`:
    `g = ms.grad(f, 1)(...)`, `loss, g = ms.value_and_grad(f, 1)(...)`, `loss, (g, gp) =
    vg(...)` with weights (`(g, gp) = ms.grad(f, 1, w)(...)` too); None otherwise."""
    parent = ctx.parent(applied)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is applied):
        return None
    target: ast.expr = parent.targets[0]
    q = ctx.qualname(builder.func) or ""
    if q.rsplit(".", 1)[-1] == "value_and_grad":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None
        target = target.elts[1]
    given, weights = _argument(builder, 2, "weights")
    if given and not (isinstance(weights, ast.Constant) and weights.value is None):
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None
        target = target.elts[0]
    has_aux = next((k.value for k in builder.keywords if k.arg == "has_aux"), None)
    if has_aux is not None and not (isinstance(has_aux, ast.Constant) and has_aux.value is False):
        return None
    return target if isinstance(target, ast.Name) else None


#: ops functions that take a tuple as it is (a sequence of tensors, or anything): an empty
#: gradient given to them is not reported
_TAKE_SEQUENCES = frozenset(
    {"depend", "stop_gradient", "stack", "concat", "cat", "addn", "hstack", "vstack", "dstack", "column_stack", "tuple_to_array", "identity"}
)


def _empty_tuple_use(name: ast.Name, many: bool, func: ast.AST, ctx: Context) -> ast.expr | None:
    """Where the empty gradient bound to `name` (bound once in `func`) is used as a tensor
    or, for a tuple of positions, indexed: an index, a method or attribute, arithmetic, an
    argument of an `ops` function."""
    if analyzer(ctx).single_assignment(name.id, func) is None and _stores(name.id, func) != 1:
        return None
    for n in own_nodes(func):
        if not (isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Load)):
            continue
        parent = ctx.parent(n)
        if isinstance(parent, ast.Subscript) and parent.value is n:
            return parent  # an index of an empty tuple
        if many:
            continue
        if isinstance(parent, ast.Attribute) and parent.value is n and parent.attr not in ("count", "index"):
            return parent
        if isinstance(parent, ast.BinOp) and not (isinstance(parent.op, ast.Mult) and _int_constant(parent.right if parent.left is n else parent.left)):
            return parent
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is n:
            q = ctx.qualname(parent.func) or ""
            if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] not in _TAKE_SEQUENCES:
                return parent
    return None


def _int_constant(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is int


def _stores(name: str, func: ast.AST) -> int:
    return sum(1 for n in own_nodes(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store))
