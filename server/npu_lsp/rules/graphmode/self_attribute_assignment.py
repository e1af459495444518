"""MS132: (STRICT) assigning a non-Parameter attribute of `self` in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import none_compared, self_attr
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.values import instances

#: Cell methods that set plain attributes of the cell (measured: `set_train` in compiled
#: code fails under STRICT, "modify a member attribute of a class with self._phase"; so do
#: `set_grad` (`self.requires_grad`), `to_float` (`self._cell_init_args`), `add_flags`
#: (`self._func_graph_flags`) and `insert_child_to_cell` (`self._cells`): written/apisurface
#: probes `av_*` of category cell_mutator, on `self` and on a sub-cell)
_SETTING_METHODS = frozenset({"set_train", "set_grad", "to_float", "add_flags", "insert_child_to_cell"})


#: Methods whose call as a statement MindSpore's parser rewrites into an assignment of the
#: receiver (`T.append(v)` -> `T = T.append(v)`; `parse_expr_statement_white_list` of 2.10's
#: `graph/_parse/parser.py`). With `T` an item of a `self` attribute (`self.d["k"]`) that
#: assignment is an assign subscript of `self.d`, refused under STRICT unless it is a Parameter.
EXPANDED_METHODS = frozenset(
    {"append", "insert", "clear", "reverse", "extend", "update", "register_hook"}
)


def _on_self(e: ast.expr) -> bool:
    """`self` or an attribute chain on it (`self.backbone`)."""
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name) and e.id == "self"


def _on_module_cell(e: ast.expr, ctx: Context) -> bool:
    """A module-level Cell instance (`net = nn.SequentialCell(...)`) or an attribute chain on
    it (`model.body`), read as a global by the compiled function (not a local or parameter
    of the same name): measured, `net.set_train()` in a jit function or a `construct` fails
    under STRICT as `self.set_train()` does."""
    while isinstance(e, ast.Attribute):
        e = e.value
    if not isinstance(e, ast.Name):
        return False
    qual = ctx.scopes.info.instances.get(e.id)
    if qual is None or not ctx.scopes.is_cell_class(qual):
        return False
    func = ctx.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    local: set[str] = set()
    args = func.args
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            local.add(a.arg)
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            local.add(n.id)
        elif isinstance(n, ast.Global):
            local.difference_update(n.names)
    return e.id not in local


@rule(code="MS132", name="self-attribute-assignment", severity="error", family="graphmode")
class SelfAttributeAssignment(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `self.m = ...`, `self.m += ...` and `self.m: T = ...`
    (also `out, self.m = ...`, an item of a tuple or list target)
    in compiled code when `self.m` is not a `Parameter`, item assignments into such an
    attribute (`self.grid[i] = ...`, `self.cache["k"] = ...`), whatever it holds (a list, a
    dict, a Tensor), and calls of Cell methods that set such attributes
    (`self.backbone.set_train(False)` sets `training` and `_phase`; `set_grad`, `to_float`,
    `add_flags` and `insert_child_to_cell` likewise), also on a module-level
    network the compiled function reads (`net.set_train(False)` inside an `@ms.jit` eval step),
    and `setattr(obj, "m", v)` on `self`, a sub-cell, or a plain object held on `self` or made
    in the function (measured: "The third argument should be a dictionary" for a constant `v`
    on `self` or a sub-cell, the graph-variable error for a tensor, "The pointer
    [local_dict_cnode] is null" on a plain object; written set `langref`, probes `setattr_*`).
    Also an attribute of one of the module's classes set by its class name and used by the
    same function (`WarmupScale.step += 1`, or `Cls.mode = 3` then `x * Cls.mode`): STRICT
    then handles it as a Python object and refuses the expressions that read it.
    A method of a plain object the cell holds is compiled with the object as its `self`, so
    `self.last_step += 1` in `Sched.step` is flagged when `construct` calls
    `self.scheduler.step()`, also when the cell receives the object through its constructor
    (`Opt(params, Sched(0.1))`, `self.scheduler = scheduler`); assigning `self.sched.x`
    directly in `construct` compiles (measured, written/heldout15b probes `ls17b_obj_*`,
    `ls17b_ctor_obj_*`), and when compiled code calls a module-level plain object
    (`stopper(loss)` compiles its `__call__`, `tracker.update(x)` its method) or one it
    builds itself (`s = Stopper(); s.update(x)`; written/heldout37c probes `fix37g_obj_*`:
    refused under STRICT, compiled at LAX; a method that only reads compiles), and when the module's call of the cell or of a jit function
    passes it as an argument (`attn(x, cache)`, `Net()(x, Cache(4))`, `step(x,
    cache=cache)`: `cache.update(k, 0)` storing `self.keys[i] = ...` is refused with the
    assign-subscript message; written/heldout26a probes `fix27a_argobj_*`). Calling such an object itself (`self.stopper(v)`) compiles its
    `__call__` the same way (written/heldout18b probes `fe18b_oc_*`). Such a method is
    parsed only when its call is inferred: called only under a condition MindSpore decides
    while compiling (`if seq_len > self.max_seq_len_cached:` on a shape or an int argument)
    that the checker cannot evaluate, it is not flagged (written/heldout26a probes
    `fix26c_rope_*`: compiled under STRICT when the input makes the test False, refused when
    it makes it True; the same store in `construct` itself is refused either way).
    An attribute of a `@jit_class` instance the cell holds is refused too (`self.cfg.scale =
    3.0`), whether `__init__` builds the instance or every construction of the cell gives it
    one (`Writer(shared)` with `shared = Tracker()`, `Writer(Tracker())`; two sub-cells
    sharing one tracker: "Can not find kernel tensor for node : ValueNode<MsClassObject>",
    measured, written/lax probes `genfresh36_jw_*`; a plain class compiles).

    ## Why is this bad?
    STRICT graphs can only update Parameters: `TypeError: In JIT strict mode, if need to
    modify a member attribute of a class with self.m, the member attribute must be of the
    Parameter type.` (a new attribute gives `AttributeError`); an item assignment gives
    `TypeError: When JIT_SYNTAX_LEVEL is not set to LAX self.grid should be initialized as a
    'Parameter' in the '__init__' function to perform assign subscript`. The default LAX level
    accepts both. A list or dict method that changes its receiver, called as a statement on an
    item of a `self` attribute (`self.history["loss"].append(x)`, `self.ls[0].extend(...)`), is
    such an item assignment: MindSpore rewrites `T.append(v)` into `T = T.append(v)`.
    MindSpore refuses them before shapes are known, so also under a condition on an input's
    shape that the input makes false (`if x.shape[0] > 100:`); a branch folded away on a
    constant (`if self.use_cache:` with False) is not compiled, nor is the body of `if
    self.m is not None:` (the `else` of `if self.m is None:`) when `self.m` is still the
    None `__init__` gave it (no store of `m` outside the class, none earlier in the function:
    written/heldout17a probe `st18_memo_ifnotnone_read` compiles under STRICT), nor the
    store of a lazy default `if self.m is None: self.m = v` when nothing in the file makes
    `self.m` None (every store gives a constant or a parameter defaulting to one, and no call
    passes None there: diffusers' LoRA layers, written/zoo probes `ld23_lazy_*`). MindSpore asks what
    the attribute holds, not how `__init__` spells it: an attribute `__init__` takes from a
    sub-cell's Parameter (`self.w = self.dense.weight`, `self.p = self.net.p`) or from a
    constructor argument the file gives a Parameter (`Net(Parameter(...))`) is one, and
    assigning it compiles.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.count = 0

        @ms.jit(fullgraph=True)
        def construct(self, x):
            self.count += 1
            return x + self.count
    ```

    ## Use instead
    Keep mutable state in a Parameter and update it with `ops.assign`:
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.count = Parameter(Tensor(0, ms.int32), name="count", requires_grad=False)

        @ms.jit(fullgraph=True)
        def construct(self, x):
            ops.assign(self.count, self.count + 1)
            return x + self.count
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only): assigning a non-Parameter `self` attribute.
    """

    nodes = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.scope or not ctx.scope.strict:
            return
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _SETTING_METHODS and (
                _on_self(f.value) or _on_module_cell(f.value, ctx)
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `{ctx.segment(f)}()` cannot run in compiled code: it sets plain (non-Parameter) attributes of the cell",
                )
            elif (
                isinstance(f, ast.Attribute)
                and f.attr in EXPANDED_METHODS
                and isinstance(ctx.parent(node), ast.Expr)
                and (held := _self_item_target(f.value)) is not None
                and held not in _self_parameters(ctx)
            ):
                # measured (MindSpore 2.10): `self.d["k"].append(x)`, `.extend`, `self.ls[0].append`,
                # `self.t[0].append` (a tuple of lists), `self.cfg["h"]["k"].append` fail under
                # STRICT with the assign-subscript message; `self.lst.append(x)` and
                # `d = self.d; d["k"].append(x)` compile; LAX runs them all
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `{ctx.segment(node)}` stores back into `self.{held}` (MindSpore turns `{f.attr}` on an item into an item assignment: self.{held} should be initialized as a 'Parameter' in the '__init__' function to perform assign subscript)",
                )
            elif (
                isinstance(f, ast.Name)
                and f.id == "setattr"
                and len(node.args) == 3
                and ctx.qualname(f) == "builtins.setattr"
            ):
                # measured: `setattr(self, "scale", 2)` fails under STRICT ("The third argument
                # should be a dictionary"), as does a graph variable given as the value, and so
                # does it on a sub-cell (`setattr(self.sub, "k", 2)`) and on a plain object held
                # on `self` or made in the function ("The pointer[local_dict_cnode] is null"); LAX
                # runs it
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `setattr({ctx.segment(node.args[0])}, ...)` cannot run in compiled code (MindSpore: The third argument should be a dictionary / The pointer[local_dict_cnode] is null)",
                )
            return
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        if isinstance(node, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
            targets = _flat_targets(targets)
        a = analyzer(ctx)
        params = _self_parameters(ctx)
        for t in targets:
            if isinstance(t, ast.Attribute) and self._on_jit_class_member(t, ctx):
                member = ctx.segment(t.value)
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, attributes of the jit_class instance `{member}` cannot be set",
                )
                continue
            if (
                (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self")
                and t.attr not in params
                and not _may_hold_parameter(a.owner_class(ctx.function), t.attr, ctx, set())
                and not _under_false_none_test(node, ctx)
                and not _lazy_default_never_run(node, ctx)
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, `self.{t.attr}` can only be modified if it is a Parameter",
                )
                continue
            class_attr = _class_attribute_target(t, node, ctx)
            if class_attr is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, the class attribute `{class_attr}` (an attribute of a Python class, not a Parameter) cannot be modified in compiled code and then used (MindSpore: the inputs should be constant)",
                )
                continue
            held = _self_item_target(t)
            if held is not None and held not in params:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT, items of `self.{held}` can only be assigned if `self.{held}` is a Parameter (MindSpore: self.{held} should be initialized as a 'Parameter' in the '__init__' function to perform assign subscript)",
                )

    @staticmethod
    def _on_jit_class_member(t: ast.expr, ctx: Context) -> bool:
        """`self.inner.x = ...` where `self.inner` holds a `@jit_class` instance."""
        return (
            isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Attribute)
            and isinstance(t.value.value, ast.Name)
            and t.value.value.id == "self"
            and (
                analyzer(ctx).holds_jit_class(ctx.function, t.value.attr)
                or _given_jit_class(ctx.function, t.value.attr, ctx)
            )
        )


def _given_jit_class(func: ast.AST | None, attr: str, ctx: Context) -> bool:
    """Does `self.<attr>` hold an `__init__` argument that every `Cls(...)` call of the file
    gives as an instance of one of the module's `@jit_class` classes (`self.tracker = tracker`
    with `Writer(shared)`, `shared = Tracker()`, or `Writer(Tracker())`)? Setting its attributes
    fails under STRICT as on one built in `__init__` (measured, written/lax probes
    `genfresh36_jw_*`: "Can not find kernel tensor for node : ValueNode<MsClassObject>"; a plain
    class compiles; fresh v6 seed 12000857, one tracker two sub-cells share)."""
    a = analyzer(ctx)
    cls = a.owner_class(func)
    info = ctx.scopes.info
    owner = info.classes.get(cls.name) if cls is not None else None
    param = owner.attr_params.get(attr) if owner is not None else None
    init = owner.methods.get("__init__") if owner is not None else None
    if cls is None or param is None or not isinstance(init, ast.FunctionDef):
        return False
    params = [p.arg for p in init.args.args[1:]]
    calls = instances(ctx).instantiations(cls.name)
    if not calls:
        return False
    for call in calls:
        given = next((k.value for k in call.keywords if k.arg == param), None)
        if given is None and param in params and params.index(param) < len(call.args):
            given = call.args[params.index(param)]
        if given is None or any(isinstance(x, ast.Starred) for x in call.args) or not _jit_class_instance(given, call, ctx):
            return False
    return True


def _jit_class_instance(e: ast.expr, where: ast.AST, ctx: Context) -> bool:
    """Is `e` (at `where`) a new instance of one of the module's `@jit_class` classes: the
    call itself, or a name bound once to one (in the enclosing function, or at module level)?"""
    info = ctx.scopes.info
    if type(e) is ast.Name:
        func = ctx.enclosing_function(where, lambdas=False)
        bound = analyzer(ctx).single_assignment(e.id, func)
        if bound is None and func is None and e.id in info.instances:
            made = info.instances[e.id]
            mod, _, name = made.rpartition(".")
            held = info.classes.get(name) if mod == info.module else None
            return bool(held and held.jit_class)
        if bound is None:
            return False
        e = bound
    if type(e) is not ast.Call or type(e.func) is not ast.Name:
        return False
    held = info.classes.get(e.func.id)
    return bool(held and held.jit_class)


def _flat_targets(targets: list[ast.expr]) -> list[ast.expr]:
    """The targets with the items of tuple and list targets in their place: measured
    (written/heldout23a probes `lax24a_hid_*`), `out, self.last = self.gru(x, h0)` and
    `[out, self.h] = ...` fail under STRICT as `self.last = ...` does, unless the attribute
    is a Parameter."""
    flat: list[ast.expr] = []
    for t in targets:
        if isinstance(t, ast.Starred):
            t = t.value
        if isinstance(t, (ast.Tuple, ast.List)):
            flat.extend(_flat_targets(t.elts))
        else:
            flat.append(t)
    return flat


def _class_attribute_target(t: ast.expr, node: ast.AST, ctx: Context) -> str | None:
    """`Cls.attr` for a target `Cls.attr` naming a class of the module (not a local of that name)
    when the compiled function reads the attribute too: `Cls.attr += 1`, or `Cls.attr = v`
    and a read of `Cls.attr`. Measured under STRICT: `WarmupScale.step += 1` in construct and
    `Counter.calls += 1` in a jit function are refused ("When handling script
    '__input_key_0__ + __input_key_1__' ... the inputs should be constant"), as is
    `NetE.mode = 3` followed by `x * NetE.mode`; reading `NetE.SCALE` alone compiles; LAX
    compiles all of them."""
    if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)):
        return None
    name = t.value.id
    fn = ctx.function
    if fn is None or not any(isinstance(st, ast.ClassDef) and st.name == name for st in ctx.tree.body):
        return None
    read = isinstance(node, ast.AugAssign)
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            return None  # a local of that name
        if (
            not read
            and isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and n.attr == t.attr
            and isinstance(n.value, ast.Name)
            and n.value.id == name
        ):
            read = True
    return f"{name}.{t.attr}" if read else None


def _self_parameters(ctx: Context) -> set[str]:
    """The `self` attributes that hold Parameters in the class owning the checked function."""
    a = analyzer(ctx)
    return a.self_info(a.owner_class(ctx.function)).parameters


def _self_item_target(t: ast.expr) -> str | None:
    """`m` for an item-assignment target `self.m[...]` (also `self.m[i][j]`), else None."""
    if not isinstance(t, ast.Subscript):
        return None
    base = t.value
    while isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self":
        return base.attr
    return None


#: Attributes of MindSpore's own cells that hold Parameters (`self.w = self.dense.weight`).
_CELL_PARAMETER_ATTRS = frozenset(
    {"weight", "bias", "gamma", "beta", "moving_mean", "moving_variance", "embedding_table"}
)


def _may_hold_parameter(
    cls: ast.ClassDef | None, attr: str, ctx: Context, seen: set[tuple[int, str]]
) -> bool:
    """Can `self.<attr>` hold a Parameter made elsewhere? MindSpore decides on the object the
    attribute holds when the graph is built, not on how `__init__` spells it: measured under
    STRICT, `self.p = self.p * 2` compiles when `__init__` took `self.p` from a sub-cell
    (`self.p = self.net.p`, `self.w = self.dense.weight`) or from a constructor argument that
    the file's instantiations give a Parameter (`Net(Parameter(...))`, or a name bound to
    one); it fails for a number given the same ways (written/mstests probes `p132_*`). So the
    attribute counts as a possible Parameter when some `__init__` value is such a reference:
    an attribute of a held object whose class's value may hold one (unknown classes: may),
    another `self` attribute that may, or an `__init__` argument some instantiation gives a
    Parameter or an attribute of an object."""
    if cls is None or (id(cls), attr) in seen:
        return False
    seen.add((id(cls), attr))
    a = analyzer(ctx)
    if attr in a.self_info(cls).parameters:
        return True
    init = next(
        (m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None
    )
    args = (
        [x.arg for x in (*init.args.posonlyargs, *init.args.args)][1:] if init is not None else []
    )
    kwonly = {x.arg for x in init.args.kwonlyargs} if init is not None else set()
    for value in a.self_values(cls).get(attr, []):
        if value is None:
            continue
        for v in (value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,):
            if isinstance(v, ast.Attribute) and _held_attribute_may_be_parameter(
                v, cls, a, ctx, seen
            ):
                return True
            if isinstance(v, ast.Name) and (v.id in args or v.id in kwonly):
                index = args.index(v.id) if v.id in args else None
                if any(
                    _site_value_may_be_parameter(e, ctx)
                    for e in _instantiation_args(cls.name, index, v.id, ctx)
                ):
                    return True
    return False


def _held_attribute_may_be_parameter(
    v: ast.Attribute, cls: ast.ClassDef, a: Analyzer, ctx: Context, seen: set[tuple[int, str]]
) -> bool:
    """`self.y` (when `self.y` may), `self.sub.w` (when the sub-cell's class may hold one in
    `w`), `obj.w` of another object (may)."""
    base = v.value
    if isinstance(base, ast.Name) and base.id == "self":
        return _may_hold_parameter(cls, v.attr, ctx, seen)
    if (
        isinstance(base, ast.Attribute)
        and isinstance(base.value, ast.Name)
        and base.value.id == "self"
    ):
        built = [x for x in a.self_values(cls).get(base.attr, []) if isinstance(x, ast.Call)]
        for call in built:
            q = ctx.qualname(call.func) or ""
            local = next(
                (
                    c
                    for c in ctx.tree.body
                    if isinstance(c, ast.ClassDef) and q.endswith("." + c.name)
                ),
                None,
            )
            if local is not None:
                if _may_hold_parameter(local, v.attr, ctx, seen):
                    return True
            elif q.startswith("mindspore.nn.") and v.attr not in _CELL_PARAMETER_ATTRS:
                continue
            else:
                return True
        return not built
    root = base
    while isinstance(root, ast.Attribute):
        root = root.value
    # an attribute of an imported module (`np.pi`, `ms.float32`) holds no Parameter
    return not _imported_root(root, ctx)


def _imported_root(root: ast.expr, ctx: Context) -> bool:
    """Is `root` an imported name (a module, a library object), not a variable of the file?"""
    if not isinstance(root, ast.Name):
        return False
    q = ctx.qualname(root) or ""
    return bool(q) and not q.startswith((ctx.scopes.info.module + ".", "builtins."))


def _instantiation_args(
    cls_name: str, index: int | None, name: str, ctx: Context
) -> list[ast.expr]:
    """What the file's calls `ClassName(...)` give the `__init__` argument at `index` / `name`."""
    out: list[ast.expr] = []
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        called = (
            f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        )
        if called != cls_name:
            continue
        if (
            index is not None
            and index < len(node.args)
            and not any(isinstance(x, ast.Starred) for x in node.args[: index + 1])
        ):
            out.append(node.args[index])
        out.extend(k.value for k in node.keywords if k.arg == name)
    return out


def _site_value_may_be_parameter(e: ast.expr, ctx: Context) -> bool:
    """A `Parameter(...)` call, a name the file binds to one, or an attribute of an object."""
    if isinstance(e, ast.Call):
        return (ctx.qualname(e.func) or "").rsplit(".", 1)[-1] in ("Parameter", "ParameterTuple")
    if isinstance(e, ast.Name):
        return any(
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == e.id for t in n.targets)
            and _site_value_may_be_parameter(n.value, ctx)
            for n in ast.walk(ctx.tree)
        )
    if isinstance(e, ast.Attribute):
        root = e.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return not _imported_root(root, ctx)
    return False


def _under_false_none_test(node: ast.AST, ctx: Context) -> bool:
    """Is `node` on the side of an `if self.a is not None:` (the body) or `if self.a is
    None:` (the `else`) that MindSpore folds away because `self.a` is still the None that
    `__init__` gave it? It reads the attribute off the object while compiling, so when
    nothing Python runs sets `a` (every store of an attribute `a` in the file is in the
    cell's class) and the function stores none before the test, the side is never
    inferred, and a store there is never refused (measured on 2.10, written/heldout17a
    probe `st18_memo_ifnotnone_read`: `if self.target is not None: self.target = ...`
    compiles under STRICT; `st18_memo_ifnone_*`, the store under `is None`, is refused)."""
    func = ctx.function
    child: ast.AST = node
    parent = ctx.parent(node)
    while parent is not None and parent is not func:
        if isinstance(parent, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False  # a loop's earlier turn may have stored it
        if isinstance(parent, ast.If) and child is not parent.test:
            compared = none_compared(parent.test)
            attr = self_attr(compared[0]) if compared is not None else None
            if (
                compared is not None
                and attr is not None
                and (child in parent.body) == compared[1]
                and _still_init_none(attr, parent, ctx)
            ):
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _lazy_default_never_run(node: ast.AST, ctx: Context) -> bool:
    """Is `node` the store of a lazy default, `if self.a is None: self.a = v`, where nothing
    in the file ever makes `self.a` None? MindSpore folds the test on the attribute's value
    while compiling, so the store is compiled only when the object holds None (measured,
    written/zoo probes `z22_isnone_*` and `ld23_lazy_*`: `lora_scale=1` from the
    constructor, also set again by a Python method, compiles under STRICT; None from
    `__init__` is refused). Every store of `a` in the file (`__init__`'s included) must give
    a constant other than None or a parameter whose default is one."""
    parent = ctx.parent(node)
    compared = none_compared(parent.test) if isinstance(parent, ast.If) else None
    attr = self_attr(compared[0]) if compared is not None else None
    if attr is None or not instances(ctx)._lazy_default(node, attr):  # type: ignore[arg-type]
        return False
    stores = instances(ctx).attr_stores(attr)
    if stores is None:
        return False  # a `setattr` of an unknown name may set it
    stores = [st for st in stores if st is not node]
    return bool(stores) and all(_never_none(st, ctx) for st in stores)


def _never_none(st: ast.AST, ctx: Context) -> bool:
    """Does the store `st` give a constant other than None, or a parameter of its function
    whose default is one (the argument's own value is not followed)?"""
    value = getattr(st, "value", None)
    if isinstance(value, ast.Constant):
        return value.value is not None
    if not isinstance(value, ast.Name):
        return False
    func = ctx.parent(st)
    while func is not None and not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        func = ctx.parent(func)
    if func is None:
        return False
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
    if not any(a.arg == value.id and isinstance(d, ast.Constant) and d.value is not None for a, d in pairs):
        return False
    # a call passing None there (`net.set_scale(None)`, `Proj(None)`): the method's own
    # calls, by name (the class's name for `__init__`), self not counted
    called = func.name
    if called == "__init__":
        owner = ctx.parent(func)
        called = owner.name if isinstance(owner, ast.ClassDef) else called
    names = [a.arg for a in positional][1:]
    index = names.index(value.id) if value.id in names else None
    for call in ast.walk(ctx.tree):
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        if (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None) != called:
            continue
        given = [k.value for k in call.keywords if k.arg == value.id]
        if index is not None and index < len(call.args):
            given.append(call.args[index])
        if any(isinstance(g, ast.Constant) and g.value is None for g in given):
            return False
    return True


def _still_init_none(attr: str, at: ast.If, ctx: Context) -> bool:
    """`self.<attr>` holds `__init__`'s None at the test `at`: `__init__` binds it to None
    only, every store of an attribute `attr` in the file is in the owning class, and none
    of them is in the compiled function before `at`."""
    func = ctx.function
    cls = analyzer(ctx).owner_class(func)
    if cls is None or func is None:
        return False
    init = analyzer(ctx).self_values(cls).get(attr) or []
    if not init or not all(isinstance(v, ast.Constant) and v.value is None for v in init):
        return False
    stores = instances(ctx).attr_stores(attr)
    if stores is None:
        return False  # a `setattr` of an unknown name may set it
    lo, hi = cls.lineno, cls.end_lineno or cls.lineno
    f_lo = getattr(func, "lineno", 0)
    for st in stores:
        if isinstance(st, ast.Call):
            return False  # `setattr(self, k, ...)` over names: `__init__`'s values are not all None
        line = getattr(st, "lineno", 0)
        if not lo <= line <= hi:
            return False  # set by Python code outside the class (before the call, maybe)
        if f_lo <= line < at.lineno:
            return False  # stored earlier in the function itself
    return True

