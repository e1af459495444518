"""MS188: the function a graph differentiates, called again in it after the gradient."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from npu_lsp.astutil import node_key
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names, own_nodes, store_lines

#: the grad builders, by their last name (`ms.grad`, `ms.value_and_grad`, `ops.grad`, ...)
_BUILDERS = frozenset({"grad", "value_and_grad"})


@rule(code="MS188", name="differentiated-function-called-again", severity="error", family="graphmode")
class DifferentiatedFunctionCalledAgain(GraphRule):
    """## What it does
    Flags a call, in a jit function or `construct`, of the function that the same compiled
    function differentiates (`loss_fn` of `ms.value_and_grad(loss_fn, ...)` or `ms.grad`,
    `self.forward`) when the call comes after the gradient was taken there: the gradient
    built in place (`ms.value_and_grad(loss_fn, None, params)(x, y)`), through a local
    (`grad_fn = ...` then `grad_fn(x, y)`) or through a module-level `grad_fn`, with the
    parameters' gradient (`weights` given), and called again with the very arguments the
    gradient was taken on (none of them rebound in between). Typically
    "the loss after the step": `opt(grads)` then `return loss, loss_fn(x, y)`.
    A gradient over inputs only counts when what it differentiates reads Parameters: the
    PINN residual `du = self.grad(self.net)(x)` then `u = self.net(x)`, with `self.grad` an
    `ops.GradOperation(...)` (any of `get_all`, `get_by_list`, `sens_param`) or with
    `ops.grad` / `ms.grad` / `ms.value_and_grad`, of a cell built from weighted layers
    (`nn.Dense`, a `SequentialCell` of them, a Cell of this file building one), or of a
    method or function calling such a cell. The same call made once before the gradient
    too (`u = self.net(x)` first) compiles. The gradient may also be taken by a wrapper
    Cell of this file: `du = deriv(x)` (or `self.deriv(x)`) with `deriv = Deriv(net)` whose
    `construct(self, x)` returns `self.grad(self.net)(x)` (a held `GradOperation`, or
    `ms.grad`), then `u = net(x)` (or `self.net(x)`, `deriv.net(x)`) on the same `x`.

    ## Why is this bad?
    MindSpore 2.10 compiles the differentiated function as one graph shared by the gradient
    and by the later call, and the later call's order after the gradient makes it a cycle:
    compiling stops at every syntax level with `RuntimeError: Graph cycle exists, size: ...`,
    with or without a parameter update in between. The rule: in one compiled graph, a call
    of a Parameter-reading function or cell with the very arguments of a gradient of it
    taken earlier, and not made before that gradient, is a cycle.

    ## Example
    ```python
    @ms.jit
    def step(x, y):
        loss, grads = ms.value_and_grad(loss_fn, None, opt.parameters)(x, y)
        opt(grads)
        return loss, loss_fn(x, y)
    ```

    ## Use instead
    Call the network itself (not the differentiated function), or take the loss after the
    step in the next call:
    ```python
    @ms.jit
    def step(x, y):
        loss, grads = ms.value_and_grad(loss_fn, None, opt.parameters)(x, y)
        opt(grads)
        return loss, ops.mse_loss(net(x), y)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT, with the written set `trainsteps`
      (`ms_grad_function_in_jit`: `ms.grad(loss_fn, weights=params)`, an `ops.assign` loop,
      then `return loss_fn(x, y)`) and its probes: `value_and_grad` with an `ops.assign`
      loop, with `opt(grads)`, with `ops.depend(loss, opt(grads))`, with only
      `ops.clip_by_global_norm` or nothing in between, with a module-level `grad_fn`, and
      `self.forward` in a `construct` are rejected; calling the network directly after the
      gradient, calling the function before the gradient (also between building `grad_fn`
      and calling it) and an `ops.assign` loop without a gradient compile; so do a
      gradient over inputs only (`ms.grad(f)(w, x)` then `f(w, x)`) and the function called
      again on other arguments (`loss_fn(x * 2, y)`) or after an argument was rebound
      (probes `cycle_lead_*`).
    - Written set `heldout20a` (PINN residuals `pinn_causal_weights_cumsum_clean`,
      `pinn_inverse_param_print_every`, `pinn_rar_resample_argsort`) and its probes `cyc_*`:
      `GradOperation()` (plain, `get_all`, `get_by_list`, `sens_param`), `ops.grad`,
      `ms.grad`, `ms.value_and_grad` and a module-level `ms.grad(net)` of a cell (in
      `construct` called from `@ms.jit`, in `construct` under GRAPH_MODE, in a helper
      method, in an `@ms.jit` function, in one expression, result unused) and of a method
      calling the cell are rejected; the cell called first (also before and after the
      gradient), on another input, on `x * 1.0`, after `x` is rebound, a sub-cell of it, a
      weightless cell (`nn.Tanh()`), and another function differentiated (a lambda, a method
      around the cell, a second-order helper) compile.
    - Written set `heldout33b` (`r2_pinn_gradop_cell_wrapper_and_net_same_x`) and its probes
      `fix33d_wr_*`, `fix33d_wr2_*`: a wrapper Cell taking `GradOperation()` (also
      `get_all`, two inputs) or `ms.grad` of the held net on its own inputs, called before
      the net on the same inputs in an `@ms.jit` function, a jitted loss Cell (the wrapper
      built at module level or in `__init__`), via `deriv.net(x)`, or under
      `value_and_grad`, is rejected; the net called first, on `x * 1.0`, another net, a
      weightless `nn.Tanh`, a wrapper differentiating `x * 2.0` or calling `self.net(x)`
      before its gradient, a wrapper building its own net, and the wrapper called twice
      compile.
    - Written set `heldout43b` (`pinn_train_step_jit_input_grad_clean`) and its probes
      `h43b_gg_*`: a module-level `grad_x = ops.GradOperation()` (also `get_all=True` on two
      inputs) applied as `grad_x(net)(x)` in an `@ms.jit` function or in a loss function
      under `value_and_grad`, then `net(x)`, is rejected ("Graph cycle exists, size: 2");
      `net(x)` first, or `net(x * 1.0)`, compiles.
    """

    nodes = (ast.Call,)
    # every builder (`_BUILDERS`) is spelled with "grad" where it is called or imported, and
    # `GradOperation` with its own name
    words = ("grad", "GradOperation")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`, not a generator: every call of compiled code comes here
        assert isinstance(node, ast.Call)
        f = node.func
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda):
            return ()
        if isinstance(f, ast.Name) and f.id not in _BUILDERS:
            # `grad_fn(x, y)` of a module-level `grad_fn = ms.value_and_grad(loss_fn, ...)`
            info = ctx.scopes.info
            built = info.instances.get(f.id) or ""
            maker = built.rsplit(".", 1)[-1] if built.split(".")[0] == "mindspore" else ""
            # `grad_x(net)` of a module-level `grad_x = ops.GradOperation()` takes the
            # operation's path below (measured, written/heldout43b `pinn_train_step_jit_input_grad_clean`)
            if maker not in _OPERATIONS:
                if maker not in _BUILDERS:
                    return self._through_wrapper(node, func, ctx) if node.args and _wrapper_classes(ctx) else ()
                wrapped = info.wraps.get(f.id)
                if not wrapped or f.id in bound_names(func, ctx):
                    return ()
                builder = module_builder(f.id, ctx)
                if builder is None or not (_with_weights(builder) or reads_parameters(("", wrapped[0]), func, ctx)):
                    return ()
                return self._again(node, ("", wrapped[0]), node, func, ctx)
        if not node.args:
            return ()
        operation = grad_operation(f, func, ctx)
        if operation is not None:
            # `self.grad(self.net)` of `self.grad = ops.GradOperation(...)`,
            # `ops.GradOperation()(net)`: a gradient over inputs (or `get_by_list`)
            key = callee_key(node.args[0])
            if key is None or not reads_parameters(key, func, ctx):
                return ()
            applied = applied_at(node, func, ctx)
            sens = any(k.arg == "sens_param" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in operation.keywords)
            return () if applied is None else self._again(node, key, applied, func, ctx, sens)
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if last not in _BUILDERS:
            # `self.deriv(x)` of a wrapper Cell whose `construct` takes the gradient
            return self._through_wrapper(node, func, ctx) if isinstance(f, ast.Attribute) and _wrapper_classes(ctx) else ()
        q = ctx.qualname(f) or ""
        if q.split(".")[0] != "mindspore" or q.rsplit(".", 1)[-1] not in _BUILDERS:
            return ()
        key = callee_key(node.args[0])
        if key is None or not (_with_weights(node) or reads_parameters(key, func, ctx)):
            return ()
        applied = applied_at(node, func, ctx)
        return () if applied is None else self._again(node, key, applied, func, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `check`'s first tests: any call by name, of the attribute calls `x.grad(...)`,
        # `x.value_and_grad(...)` and `self.<attr>(...)` (a held GradOperation), and
        # `ops.GradOperation()(net)`
        return callee is ast.Name or callee is ast.Call or (callee is ast.Attribute and (called in _BUILDERS or receiver == "self"))

    def _through_wrapper(self, node: ast.Call, func: ast.AST, ctx: Context) -> list[Diagnostic]:
        """`du = deriv(x)` then `u = net(x)`: `deriv` a Cell of this file whose `construct(x)`
        returns `self.grad(self.net)(x)` (`ops.GradOperation` or `ms.grad`, on exactly its own
        parameters), `self.net` the very `net` the caller calls. MindSpore inlines the wrapper's
        graph, so the caller takes the gradient of `net` on `x` and then calls `net(x)`: the
        cycle of a gradient written in place (measured, written/heldout33b probes `fix33d_wr_*`:
        in an `@ms.jit` function, in a jitted loss Cell through `self.deriv` / `self.net`, via
        `deriv.net(x)`, under `value_and_grad`, LAX and STRICT; the net called first, on
        `x * 1.0`, another net, a weightless `nn.Tanh`, a wrapper differentiating `x * 2.0` or
        calling `self.net(x)` itself before its gradient all compile)."""
        site = _object_of(node.func, func, ctx)
        if not isinstance(site, ast.Call) or not isinstance(site.func, ast.Name):
            return []
        wrapper = _wrapper_classes(ctx).get(site.func.id)
        if wrapper is None:
            return []
        cls, attr = wrapper
        wrapped = _held_argument(cls, attr, site, ctx)
        if wrapped is None or not _holds_parameters(wrapped, None, ctx, 1):
            return []
        if len(node.args) != len(_construct_parameters(cls)) or node.keywords:
            return []
        return self._again(node, ("", ""), node, func, ctx, matches=lambda e: _object_of(e, func, ctx) is wrapped, name="the network")

    def _again(
        self,
        node: ast.Call,
        key: tuple[str, str],
        applied: ast.Call,
        func: ast.AST,
        ctx: Context,
        sens: bool = False,
        matches: Callable[[ast.expr], bool] | None = None,
        name: str = "",
    ) -> list[Diagnostic]:
        # measured (probes `cycle_*`, written/trainsteps; `cyc_*`, written/heldout20a): the
        # cycle needs the very call the gradient made: `loss_fn(x * 2, y)`, or `x` rebound in
        # between, compiles, and so does the same call made once before the gradient too
        # (`u = net(x)`, `grad(net)(x)`, `net(x)`). With `sens_param=True` the gradient is
        # given one more argument (the sensitivity) than the network.
        after = applied.lineno
        end = (applied.end_lineno or after, applied.end_col_offset or 0)
        same = _arguments(applied)
        sames = (same, same[:-1]) if sens and same else (same,)
        rebound = _stores_from(func, after, ctx)
        is_callee = matches if matches is not None else (lambda e: callee_key(e) == key)
        mine = [n for n in own_nodes(func) if isinstance(n, ast.Call) and _arguments(n) in sames and is_callee(n.func)]
        start = (applied.lineno, applied.col_offset)
        if any((c.lineno, c.col_offset) < start for c in mine):
            return []
        if _applied_more_than_once(applied, func, ctx):
            return []
        calls = sorted((c for c in mine if (c.lineno, c.col_offset) > end), key=lambda c: (c.lineno, c.col_offset))
        for c in calls:
            used = {n.id for a in [*c.args, *(k.value for k in c.keywords)] for n in ast.walk(a) if isinstance(n, ast.Name)}
            if any(after <= line < c.lineno for name in used for line in rebound.get(name, ())):
                continue
            return [
                ctx.diagnostic(
                    self,
                    c,
                    (
                        f"`{ctx.segment(c.func)}` is differentiated in this graph (by `{ctx.segment(applied.func)}`, whose `construct` takes its gradient) and called again on the same input after it: MindSpore stops with 'Graph cycle exists'; call it before the gradient"
                        if name
                        else f"`{ctx.segment(c.func)}` is differentiated in this graph and called again after its gradient: MindSpore stops with 'Graph cycle exists'; make this call before the gradient, or call the network directly instead of the differentiated function"
                    ),
                )
            ]
        return []


def _applied_more_than_once(applied: ast.Call, func: ast.AST, ctx: Context) -> bool:
    """Does the graph take this gradient more than once, once loops are unrolled: the same
    gradient call written twice, or inside a loop of two or more iterations (or of a count
    not known here)? Measured on MindSpore 2.10 (written/heldout30b probes `fix30d_cyc_*`,
    `maml_assign_inner_update_restore`, `meta_parametertuple_clone_outer_inner_clean`): the
    cycle comes with a single gradient only; two gradients written out, a `for` over
    `range(2)` or a 2-tuple, or a `while` counting to 2 compile, while `range(1)` (also
    `range(self.steps)` with `self.steps = 1`) is rejected as without a loop."""
    callee = node_key(applied.func)
    total = 0
    for c in own_nodes(func):
        if not isinstance(c, ast.Call) or (c is not applied and node_key(c.func) != callee):
            continue
        times = _iterations(c, func, ctx)
        if times is None:
            return True
        total += times
        if total > 1:
            return True
    return False


def _iterations(node: ast.AST, func: ast.AST, ctx: Context) -> int | None:
    """How many times the loops of `func` around `node` run it (1 outside loops); None
    when a count is not known while checking (a `while`, a `for` over anything but `range`
    of known ints or a tuple / list display)."""
    times = 1
    child, parent = node, ctx.parent(node)
    while parent is not None and parent is not func:
        if isinstance(parent, ast.While) and child in parent.body:
            return None
        if isinstance(parent, (ast.For, ast.AsyncFor)) and child in parent.body:
            count = _trip_count(parent.iter, func, ctx)
            if count is None:
                return None
            times *= count
        child, parent = parent, ctx.parent(parent)
    return times


def _trip_count(it: ast.expr, func: ast.AST, ctx: Context) -> int | None:
    if isinstance(it, (ast.Tuple, ast.List)):
        return None if any(isinstance(e, ast.Starred) for e in it.elts) else len(it.elts)
    if not (isinstance(it, ast.Call) and ctx.qualname(it.func) == "builtins.range" and it.args and not it.keywords):
        return None
    bounds: list[int] = []
    for a in it.args:
        v = values(ctx).of(a, func)
        if not (isinstance(v, av.Scalar) and isinstance(v.value, int) and not isinstance(v.value, bool)):
            return None
        bounds.append(v.value)
    try:
        return len(range(*bounds))
    except ValueError:  # a zero step
        return None


def callee_key(e: ast.expr) -> tuple[str, str] | None:
    """`loss_fn` -> ("", "loss_fn"); `self.forward` -> ("self", "forward"); else None."""
    if isinstance(e, ast.Name):
        return ("", e.id)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        return ("self", e.attr)
    return None


def applied_at(builder: ast.Call, func: ast.AST, ctx: Context) -> ast.Call | None:
    """The call that takes the gradient `builder` makes: the builder called in place
    (`ms.grad(fn, None, params)(x)`), else the first call of a local bound to it
    (`grad_fn = ms.value_and_grad(fn, None, params)` ... `grad_fn(x, y)`); None when the
    gradient is never taken."""
    parent = ctx.parent(builder)
    if isinstance(parent, ast.Call) and parent.func is builder:
        return parent
    if not isinstance(parent, ast.Assign) or parent.value is not builder:
        return None
    bound = {t.id for t in parent.targets if isinstance(t, ast.Name)}
    calls = [
        n
        for n in own_nodes(func)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in bound and n.lineno > builder.lineno
    ]
    return min(calls, key=lambda c: (c.lineno, c.col_offset)) if calls else None


def _with_weights(builder: ast.Call) -> bool:
    """`ms.grad` / `ms.value_and_grad` given `weights` (third argument or keyword), not
    None. Measured: a gradient over inputs only (`ms.grad(f)(w, x)` then `f(w, x)`)
    compiles; the cycle comes with the parameters' gradient."""
    weights = builder.args[2] if len(builder.args) > 2 else next((k.value for k in builder.keywords if k.arg == "weights"), None)
    return weights is not None and not (isinstance(weights, ast.Constant) and weights.value is None)


def module_builder(name: str, ctx: Context) -> ast.Call | None:
    """The builder call of a module-level `name = ms.value_and_grad(...)` (the first one),
    from one table of the module's `name = call(...)` statements per file."""
    table: dict[str, ast.Call] | None = ctx.cache.get(_BUILDERS_KEY)
    if table is None:
        table = {}
        for st in ctx.tree.body:
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        table.setdefault(t.id, st.value)
        ctx.cache[_BUILDERS_KEY] = table
    return table.get(name)


_BUILDERS_KEY = "MS188-module-builders"


def _arguments(call: ast.Call) -> tuple[object, ...]:
    """The call's arguments in a text-independent form, to compare two calls."""
    return (*(node_key(a) for a in call.args), *((k.arg, node_key(k.value)) for k in call.keywords))


def _stores_from(func: ast.AST, line: int, ctx: Context) -> dict[str, list[int]]:
    """Lines at or after `line` where the function binds each name."""
    return {
        name: after
        for name, lines in store_lines(func, ctx).items()
        if (after := [n for n in lines if n >= line])
    }


#: the grad operation classes: `ops.GradOperation(...)` built, then called on the function
_OPERATIONS = frozenset({"GradOperation"})


def grad_operation(f: ast.expr, func: ast.AST, ctx: Context) -> ast.Call | None:
    """The `ops.GradOperation(...)` call that built the callee `f` of `f(fn)`: built in place
    (`ops.GradOperation()(fn)`), held on `self` (`self.grad = ops.GradOperation()` in
    `__init__`) or bound to a local; None for anything else."""
    if not ctx.mentions("GradOperation"):
        return None
    built: ast.expr | None = None
    if isinstance(f, ast.Call):
        built = f
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(func)
        held = a.self_values(cls).get(f.attr, []) if cls is not None else []
        built = held[0] if len(held) == 1 else None
    elif isinstance(f, ast.Name):
        built = constructed.built(f, func, ctx)
    if not isinstance(built, ast.Call):
        return None
    q = ctx.qualname(built.func) or ""
    return built if q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in _OPERATIONS else None


def _layers_with_parameters() -> frozenset[str]:
    data = json.loads(Path(__file__).with_name("ms_layer_parameters.json").read_text(encoding="utf-8"))
    return frozenset(data["layers"])


#: MindSpore's layers that own Parameters (`nn.Dense`, `nn.Conv2d`, ...), from its 2.10 tables
_PARAMETER_LAYERS = _layers_with_parameters()
#: cell containers: they own the Parameters of the cells they are given
_CONTAINERS = frozenset({"SequentialCell", "CellList", "CellDict"})
_DEPTH = 4


def reads_parameters(key: tuple[str, str], func: ast.AST, ctx: Context, depth: int = 0) -> bool:
    """Does the callable `key` (`callee_key`) of compiled `func` read Parameters: a cell
    built (in `__init__`, at module level, or by every place building this Cell) from a
    MindSpore layer that owns weights (`nn.Dense`, a `SequentialCell` of them), a Cell of
    this file whose `__init__` builds one or a `Parameter`, or a method / module function
    calling such a cell? False when not known."""
    if depth > _DEPTH:
        return False
    scope, name = key
    if scope == "self":
        a = analyzer(ctx)
        cls = a.owner_class(func)
        if cls is None:
            return False
        method = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
        if method is not None:
            return _calls_parameters(method, method, ctx, depth + 1)
        srcs = constructed.sources(cls, name, ctx) or []
        return any(_holds_parameters(e, where, ctx, depth + 1) for e, where in srcs)
    fn = next((m for m in ctx.tree.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
    if fn is not None:
        return _calls_parameters(fn, fn, ctx, depth + 1)
    value = constructed.built(ast.Name(id=name, ctx=ast.Load()), None, ctx)
    return value is not None and _holds_parameters(value, None, ctx, depth + 1)


def _calls_parameters(body: ast.AST, func: ast.AST, ctx: Context, depth: int) -> bool:
    """Does a method or function call a cell (`self.net(x)`, `net(x)`) that reads Parameters?"""
    for n in ast.walk(body):
        if isinstance(n, ast.Call):
            key = callee_key(n.func)
            if key is not None and key != ("", "print") and reads_parameters(key, func, ctx, depth):
                return True
    return False


def _holds_parameters(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int) -> bool:
    """Does the object `e` builds own Parameters (see `reads_parameters`)?"""
    if depth > _DEPTH:
        return False
    if isinstance(e, ast.Name):
        value = constructed.built(e, where, ctx)
        return value is not None and _holds_parameters(value, where, ctx, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.qualname(e.func) or ""
    last = q.rsplit(".", 1)[-1]
    if q.split(".")[0] == "mindspore":
        if last == "Parameter" or last in _PARAMETER_LAYERS:
            return True
        if last in _CONTAINERS:
            given = [*e.args, *(k.value for k in e.keywords)]
            inside = [n for a in given for n in ast.walk(a) if isinstance(n, ast.Call)]
            if any(_holds_parameters(n, where, ctx, depth + 1) for n in inside):
                return True
            # `nn.SequentialCell(layers)` with `layers` grown in `__init__`
            if where is not None and any(isinstance(a, ast.Name) for a in given):
                return any(
                    _holds_parameters(n, where, ctx, depth + 1)
                    for n in ast.walk(where)
                    if isinstance(n, ast.Call) and n is not e and (ctx.qualname(n.func) or "").rsplit(".", 1)[-1] in _PARAMETER_LAYERS
                )
        return False
    if isinstance(e.func, ast.Name):
        cls = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == e.func.id), None)
        init = constructed.init_of(cls) if cls is not None else None
        if init is not None:
            return any(isinstance(n, ast.Call) and _holds_parameters(n, init, ctx, depth + 1) for n in ast.walk(init))
    return False


_WRAPPERS_KEY = "MS188-wrapper-classes"


def _wrapper_classes(ctx: Context) -> dict[str, tuple[ast.ClassDef, str]]:
    """The module-level Cells of this file whose `construct` takes a gradient of a held cell
    on exactly its own parameters, once and before any call of that cell there:
    class name -> (class, the attribute holding the cell). Once per file."""
    table: dict[str, tuple[ast.ClassDef, str]] | None = ctx.cache.get(_WRAPPERS_KEY)
    if table is not None:
        return table
    table = {}
    for cls in ctx.tree.body:
        if isinstance(cls, ast.ClassDef):
            attr = _gradient_of_held_cell(cls, ctx)
            if attr is not None:
                table[cls.name] = (cls, attr)
    ctx.cache[_WRAPPERS_KEY] = table
    return table


def _construct_parameters(cls: ast.ClassDef) -> list[str]:
    construct = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct"), None)
    if construct is None:
        return []
    a = construct.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults:
        return []
    return [p.arg for p in (*a.posonlyargs, *a.args)][1:]


def _gradient_of_held_cell(cls: ast.ClassDef, ctx: Context) -> str | None:
    """`attr` when `cls.construct(self, x, ...)` applies one gradient (`self.grad(self.attr)`
    of a held `ops.GradOperation()` without `sens_param`, or `ms.grad(self.attr)` /
    `ms.value_and_grad(self.attr)`) to its own parameters in order, outside loops, with no
    parameter rebound and no other use of `self.attr` (measured: calling `self.net(x)` before
    the gradient, or differentiating at `x * 2.0`, compiles in the caller)."""
    params = _construct_parameters(cls)
    if not params:
        return None
    construct = next(m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "construct")
    found: str | None = None
    uses = 0
    for n in own_nodes(construct):
        if isinstance(n, ast.Name) and n.id in params and not isinstance(n.ctx, ast.Load):
            return None
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            uses += 1
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Call) and len(n.func.args) == 1 and not n.func.keywords):
            continue
        held = n.func.args[0]
        if not (isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name) and held.value.id == "self"):
            continue
        if [a.id if isinstance(a, ast.Name) else None for a in n.args] != params or n.keywords:
            continue
        if not _is_gradient_builder(n.func.func, construct, ctx) or found is not None:
            return None
        if _iterations(n, construct, ctx) != 1:
            return None
        found = held.attr
    if found is None:
        return None
    # `self.<found>` only in the gradient (the builder may be `self.grad` too)
    others = sum(
        1
        for n in own_nodes(construct)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr == found
    )
    return found if others == 1 and uses >= 1 else None


def _is_gradient_builder(b: ast.expr, construct: ast.AST, ctx: Context) -> bool:
    operation = grad_operation(b, construct, ctx)
    if operation is not None:
        return not any(k.arg == "sens_param" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in operation.keywords)
    q = ctx.qualname(b) or ""
    return q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in _BUILDERS


def _held_argument(cls: ast.ClassDef, attr: str, site: ast.Call, ctx: Context) -> ast.expr | None:
    """What `self.<attr>` of the instance built by `site` (`Deriv(net)`) is: the object the
    argument given to the constructor parameter stored there was built by; None when
    `__init__` stores anything else or the argument cannot be followed."""
    init = constructed.init_of(cls)
    stored = analyzer(ctx).self_values(cls).get(attr) or []
    if init is None or len(stored) != 1 or not isinstance(stored[0], ast.Name):
        return None
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    if stored[0].id not in params or any(isinstance(a, ast.Starred) for a in site.args):
        return None
    index = params.index(stored[0].id)
    given = next((k.value for k in site.keywords if k.arg == stored[0].id), None)
    if given is None and index < len(site.args):
        given = site.args[index]
    if given is None:
        return None
    where = ctx.enclosing_function(site, through_classes=True)
    return _built_object(given, where, ctx)


def _built_object(e: ast.expr, where: ast.AST | None, ctx: Context, depth: int = 0) -> ast.expr | None:
    """The call that built the object the name `e` holds where it is read: a local or module
    name bound once (`constructed.built`), or a parameter of the `__init__` it is read in
    (`self.deriv = Deriv(net)` with `net` given to the outer Cell), followed to what every
    place building that Cell passes, when that is one object."""
    if not isinstance(e, ast.Name):
        return None
    if isinstance(where, ast.FunctionDef) and where.name == "__init__" and depth < 2:
        params = [a.arg for a in (*where.args.posonlyargs, *where.args.args)][1:]
        if e.id in params:
            cls = analyzer(ctx).owner_class(where)
            if cls is None or len(constructed.cached_bindings(where, ctx).get(e.id, [])) != 1:
                return None
            passed = constructed.argument(cls, params.index(e.id), e.id, ctx)
            if not passed:
                return None
            found = [_built_object(x, w, ctx, depth + 1) for x, w in passed]
            first = found[0]
            return first if first is not None and all(o is first for o in found) else None
    return constructed.built(e, where, ctx)


def _object_of(e: ast.expr, func: ast.AST, ctx: Context) -> ast.expr | None:
    """The expression that built the object a callee names in compiled `func`: `net` (a
    local bound once, else module level), `self.net` (every place building the owner Cell
    passing the same object), `deriv.net` (the constructor argument of a wrapper Cell)."""
    if isinstance(e, ast.Name):
        return constructed.built(e, func, ctx)
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)):
        return None
    if e.value.id == "self":
        cls = analyzer(ctx).owner_class(func)
        srcs = constructed.sources(cls, e.attr, ctx) if cls is not None else None
        if not srcs:
            return None
        objects = {id(o): o for o in (constructed.built(x, where, ctx) if isinstance(x, ast.Name) else x for x, where in srcs)}
        return next(iter(objects.values())) if len(objects) == 1 else None
    owner = constructed.built(e.value, func, ctx)
    if not (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)):
        return None
    cls = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == owner.func.id), None)
    return _held_argument(cls, e.attr, owner, ctx) if cls is not None else None
