"""MS116: calls to APIs MindSpore forbids inside compiled code."""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Iterable, Iterator
from importlib import resources

from npu_lsp.astutil import literal_alternation, self_attr
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import SelfInfo, analyzer, cell_list_classes
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.parameter_receivers import (
    LAYER_PARAMETERS,
    argument_parameter,
    lr_parameter,
    mapped_parameter,
    module_cell,
    module_cell_parameter,
    module_held_parameter,
    parameter_element,
    step_parameter,
)
from npu_lsp.rules.graphmode.values import in_dead_branch


@functools.cache
def _logging_functions() -> frozenset[str]:
    """MindSpore functions that log on every call (derived from its sources:
    tests/npu_lsp/difftest/derive_input_queries.py)."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_input_queries.json").read_text("utf-8")
    )
    return frozenset(data["logging_functions"])


@functools.cache
def _unsupported_statement_functions() -> dict[str, list[str]]:
    """MindSpore functions whose body holds `import` / `del` (derived from its sources by
    tests/npu_lsp/difftest/derive_input_queries.py): compiled with their caller, refused."""
    data = json.loads(
        resources.files(__package__).joinpath("ms_input_queries.json").read_text("utf-8")
    )
    out: dict[str, list[str]] = data["unsupported_statement_functions"]
    return out


# Every function of these modules is forbidden (graph/_utils/check_jit_forbidden_api.py).
_FORBIDDEN_MODULES = ("mindspore.common.initializer.", "mindspore.context.", "mindspore.log.")
# Re-exports of mindspore.context at the package top level.
_CONTEXT_FUNCS = frozenset(
    {
        "set_context",
        "get_context",
        "set_auto_parallel_context",
        "get_auto_parallel_context",
        "reset_auto_parallel_context",
        "set_ps_context",
        "get_ps_context",
        "reset_ps_context",
        "set_algo_parameters",
        "get_algo_parameters",
        "reset_algo_parameters",
        "set_offload_context",
        "get_offload_context",
    }
)
# Methods registered with @jit_forbidden_register on Cell.
_CELL_METHODS = frozenset(
    {
        "trainable_params",
        "get_parameters",
        "untrainable_params",
        "register_forward_pre_hook",
        "register_forward_hook",
        "register_backward_hook",
        "register_backward_pre_hook",
        "state_dict",
        "load_state_dict",
        "init_parameters_data",
        "set_param_ps",
        "set_comm_fusion",
        "remove_redundant_parameters",
        "load_parameter_slice",
        "parameters_broadcast_dict",
        "parameters_dict",
        "parameters_and_names",
        # also decorated @jit_forbidden_register in 2.10 (each measured: ms210 ms_jfa_* cases)
        "buffers",
        "named_buffers",
        "get_buffer",
        "register_buffer",
        "get_sub_cell",
        "register_state_dict_pre_hook",
        "register_state_dict_post_hook",
        "register_load_state_dict_pre_hook",
        "register_load_state_dict_post_hook",
        "register_saved_tensors_hooks",
    }
)
#: forbidden Cell methods with names common elsewhere (`Tensor.to`): only on known sub-cells
_CELL_ONLY_METHODS = frozenset({"to", "to_empty"})


#: `ctx.cache` key of the qualified names MS116 found nothing to report on in this file
_SILENT_KEY = "MS116.silent"

@rule(code="MS116", name="jit-forbidden-api", severity="error", family="graphmode")
class JitForbiddenApi(GraphRule):
    """## What it does
    Flags calls, inside compiled code, to APIs MindSpore refuses to compile: every function of
    `mindspore.context` (`ms.set_context`, ...), `mindspore.common.initializer` and
    `mindspore.log`, and the Cell/Parameter methods registered as JIT-forbidden
    (`self.trainable_params()`, `get_parameters`, `untrainable_params`, the forward/backward
    and state-dict hook registration methods, `state_dict`, the buffer methods,
    `get_sub_cell`, `Cell.to`, `Parameter.set_data`, `Tensor.assign_value`), and the Python
    methods of a Primitive (`self.op.add_prim_attr(...)`, `op.shard(...)`, `op.recompute()`
    on `self.op = ops.ReLU()`, a local `op = ops.ReLU()` or a module-level one a jit function
    reads: measured, "'Function' object has no attribute"), and `recompute()` of a sub-cell
    (`self.block.recompute()` on an `nn` / `mint.nn` layer or a Cell of the file: "For
    'recompute', keyword '%s' is not recognized!"; written/heldout31b probes `fix31e_rc_*`). Also flags
    reading the Parameter attributes MindSpore refuses in compiled code (`self.w.name`,
    `self.fc.weight.requires_grad`, `.key`, `.sliced`, ...) and the Cell generator methods
    (`self.cells_and_names()`); that list is measured from MindSpore 2.10 itself
    (`ms_calls.json`, one compiled read per attribute). The generator methods are flagged
    on a sub-cell (`self.body.cells_and_names()`) and on a parameter or local of a compiled
    helper (SpikingJelly's `functional.reset_net(net)` called from `construct` with `self`)
    too: "Unsupported expression 'Yield'" at both levels (written/heldout41a probes
    `fix41a_gen_*`). Loops over `self.cells()` or
    `self.name_cells()` (and its `.items()` / `.values()`) are flagged too: measured, they
    fail at both levels when the loop calls the cells; so does a list or tuple made of
    `self.cells()` (`len(list(self.cells()))`, `tuple(self.cells())[0](x)`; the names,
    `list(self.name_cells().keys())`, compile). Of a sub-cell that holds cells (an
    `nn.SequentialCell` / `nn.CellList`, or a Cell of the file storing layers), any read of
    `cells()` / `name_cells()` fails so, names included (`len(self.body.name_cells())`,
    `list(self.body.name_cells().keys())`, `"0" in self.body.name_cells()`; written/heldout32a
    probes `fix32d_nc_*`, `fix33b_nc_*`; in `__init__`, or of an `nn.Conv2d`, it compiles;
    a bare `self.body.name_cells()` statement fails under STRICT only). Setting any attribute of a Parameter
    (`self.fc.weight.requires_grad = False`, `self.w.name = ...`) is flagged as well:
    measured, "Do not support to set attribute for a parameter" at both levels. MindSpore functions that log through
    `mindspore.log` on every call (deprecated ones such as `ms.dtype_to_nptype`; the list in
    `ms_input_queries.json` is derived from MindSpore 2.10's sources) are compiled with their
    caller, so they are flagged too, and so are those whose body holds an `import` or `del`
    statement (`ms.set_seed`, `ms.save_checkpoint`: "Unsupported statement 'Import'"). The receiver may also be a Parameter taken out of a
    container of Parameters (`for p in self.params: p.name`, `for p, g in zip(opt.parameters,
    grads): p.set_data(...)`, `self.params[0].requires_grad`, a module-level
    `params = net.trainable_params()` looped over in a jit function), or a value of a dict
    of Parameters held on `self` (`{p.name: p for p in net.get_parameters()}`,
    `net.parameters_dict()`: `for k, p in self.state.items(): p.set_data(...)`,
    `self.state["w"].set_data(...)`; measured, written/heldout17a probes `fe17a_pd_*`), or a
    Parameter of a cell of a cell list (`for layer in self.layers: layer.weight.set_data(...)`,
    `self.layers[0].weight.set_data(...)`; measured, written/heldout19a probes `sd19_*`) or a Cell built at
    module level (or of a sub-cell of it, `net.encoder.weight`) and read by a jit function (`net.trainable_params()`,
    `net.cells_and_names()`, `fc.weight.requires_grad`; for `set_data`, also a Parameter the
    file's Cell class stores in `__init__`, `model.logit_scale.set_data(...)`, and a
    module-level `Parameter(...)`: measured, written/heldout34b probes `fix34d_sd_*`; and an
    argument of the compiled function itself, alone or in a tuple looped over, since only a
    Parameter has `set_data`: `def step(p, x): p.set_data(...)` given `model.scale`, probes
    `fix34d_sd_jit_arg_param`, `fix35a_sd_*`), or a Cell built in place in compiled
    code (`Net().get_parameters()`, `nn.Dense(2, 2).trainable_params()`), or the parameter of
    a helper method every call of which passes such a Parameter or sub-cell
    (`def masked(self, layer): ... layer.weight.name` with `self.masked(self.l1)`), or the
    optimizer's step counter: `self.global_step` in a subclass of `nn.Optimizer`, and the
    step a `LearningRateSchedule` subclass's `construct` is given when an instance of it is
    given to an optimizer (`global_step.asnumpy()`; measured, written/heldout25a
    `lr_numpy_schedule_in_construct` and probes `fix25c_lr_*`: refused at LAX as on `self.w`;
    the schedule called directly with a tensor step compiles). The learning rate of an
    `nn.Optimizer` subclass is such a Parameter too when every construction gives it a
    number (or `Tensor(number)`): `self.get_lr().asnumpy()`, `lr = self.get_lr();
    float(lr.asnumpy())`, `self.learning_rate.asnumpy()` (measured, written/heldout36d
    `optsched_lr_asnumpy_in_construct`, probes `fix36c_lr_*`; with a schedule or a list of
    rates `get_lr()` computes a tensor and LAX compiles it), and so is the parameter of a
    `MultitypeFuncGraph` overload that compiled code maps over `self.parameters`
    (`self.hyper_map(ops.partial(_opt, lr), self.parameters, grads)`, `self.map_(...)`) or
    calls with a loop's Parameter (`_opt(lr, p, g)`; probes `fix36c_hm_*`).
    `getattr(p, "name")` with a constant name reads the attribute as `p.name` does (flagged
    alike, even unread; `getattr(p, "name", "")` with a default compiles; probes
    `fix36c_getattr_*`). A Parameter bound directly to a
    module-level name is not flagged: measured, its attribute reads compile. Nor is a loop
    over a list `trainable_params()` returned in a file that freezes Parameters
    (`p.requires_grad = False`): that list leaves frozen Parameters out, and a loop over the
    empty list of a frozen teacher compiles nothing (measured, written/heldout21b `sd20_*`).

    ## Why is this bad?
    These APIs change or inspect the Python-side state of the network. MindSpore stops with
    `RuntimeError: Failed to compile in GRAPH_MODE because the method or function '...' is
    not supported in 'construct' or function with @jit decorator` at every syntax level.
    They are fine in `__init__` and at module level. `Tensor.register_hook` is allowed.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            n = len(self.trainable_params())
            return x * n
    ```

    ## Use instead
    Compute it once in `__init__`:
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.n_params = len(self.trainable_params())

        def construct(self, x):
            return x * self.n_params
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: JIT-forbidden APIs.
    """

    # Attribute reads are found from the module node: the text says whether the file reads
    # any refused attribute through `self` at all (rare), so ordinary files pay nothing.
    nodes = (ast.Call, ast.Module)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `self.m(...)` / `self.h.m(...)` (most calls of a Cell's `construct`) resolve to no
        # dotted name (`self` is no import, class or function of the module), so `check`
        # only looks at them when the method is a refused one
        if receiver == "self" or receiver == "self.":
            return called in _METHOD_ATTRS or called in _PRIMITIVE_METHODS
        return True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every call of compiled code comes here, and most resolve
        # to a name that is neither forbidden nor a logging function
        if type(node) is ast.Module:
            return self._attribute_reads(node, ctx)
        assert type(node) is ast.Call
        func = node.func
        q = ctx.qualname(func)
        if q is not None:
            # what follows depends on `q` alone: a name found harmless once in this file
            # (nearly all of them) is passed on one set test (~1,000 calls per 5,000 lines)
            silent: set[str] | None = ctx.cache.get(_SILENT_KEY)
            if silent is None:
                silent = ctx.cache[_SILENT_KEY] = set()
            elif q in silent:
                return ()
            top = (
                q.startswith("mindspore.")
                and q.count(".") == 1
                and q.split(".")[1] in _CONTEXT_FUNCS
            )
            if top or q.startswith(_FORBIDDEN_MODULES):
                return [
                    ctx.diagnostic(self, node, f"`{q}` cannot be called in compiled code (JIT-forbidden API)")
                ]
            stmts = _unsupported_statement_functions().get(q)
            if stmts:
                # measured (written/apisurface `set_seed__in_construct`, probes
                # `av_set_seed_*`, `av_save_checkpoint_in_construct`): in construct, a helper
                # or a jit function; called in `__init__` it is fine
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{q}` is compiled with its caller and its body holds {'an `import`' if stmts[-1] == 'Import' else 'a `del`'} statement, which graph mode does not support (MindSpore: Unsupported statement '{stmts[-1]}'); call it outside the compiled code",
                    )
                ]
            if q in _logging_functions():
                # compiled with the caller, its own `logger.warning(...)` is refused
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{q}` calls `mindspore.log` every time (a deprecation notice), which compiled code cannot call",
                    )
                ]
            silent.add(q)
            return ()
        if type(func) is not ast.Attribute:
            return ()
        if func.attr not in _METHOD_ATTRS:
            # (no generator for the sub-cell and tensor method calls of compiled code)
            if func.attr not in _PRIMITIVE_METHODS:
                return ()
            made = _primitive_made(func.value, ctx, method=func.attr)
            if made is None:
                return ()
            if not made.startswith("mindspore.ops."):
                return [
                    ctx.diagnostic(
                        self,
                        node,
                        f"`{ctx.segment(func)}(...)` on a sub-cell (`{made}`) in compiled code fails (MindSpore: \"For 'recompute', keyword '%s' is not recognized!\"); call it in `__init__`",
                    )
                ]
            return [
                ctx.diagnostic(
                    self,
                    node,
                    f"`{ctx.segment(func)}(...)`: a Primitive (`{made}`) in compiled code is only callable on its inputs, its Python methods are not available there (MindSpore: 'Function' object has no attribute '{func.attr}'); call it in `__init__`",
                )
            ]
        return self._method_call(node, func, ctx)

    def _method_call(self, node: ast.Call, func: ast.Attribute, ctx: Context) -> Iterator[Diagnostic]:
        recv = func.value
        on_self = isinstance(recv, ast.Name) and recv.id == "self"
        if func.attr in _CELL_CONTAINERS and (
            (on_self and _iterated(node, ctx)) or (_container_sub_cell(recv, ctx) and (ctx.scope is not None and ctx.scope.strict or not _discarded(node, ctx)))
        ):
            # measured: looping over `self.cells()` / `self.name_cells().items()` and calling
            # the cells (or making a list or tuple of `self.cells()`) fails at both levels ("The pointer[node] is null"; STRICT: "the inputs
            # should be constant"); of a sub-cell holding cells, any use of the container
            # fails so (`len(self.body.name_cells())`, `"0" in ...`, `[...]["0"](x)`); a bare
            # `self.body.name_cells()` statement compiles under LAX only (probe
            # `fix33b_nc_discarded`, STRICT: "the inputs should be constant")
            what = "iterating" if on_self or _looped_over(node, ctx) else "reading"
            yield ctx.diagnostic(
                self,
                node,
                f"{what} `{ctx.segment(func)}()` in compiled code fails; hold the sub-cells in an `nn.CellList` and loop over it",
            )
            return
        on_sub = (
            isinstance(recv, ast.Attribute)
            and isinstance(recv.value, ast.Name)
            and recv.value.id == "self"
        )
        fn = ctx.function
        if func.attr in _CELL_METHODS and (
            on_self
            or on_sub
            or (fn is not None and (module_cell(recv, ctx, fn) or _module_sub_cell(recv, ctx, fn)))
            or _new_cell(recv, ctx)
            or (fn is not None and _local_with_cell_only_method(recv, func.attr, fn, ctx))
        ):
            yield ctx.diagnostic(
                self,
                node,
                f"`Cell.{func.attr}` cannot be called in compiled code (JIT-forbidden API); call it in `__init__`",
            )
        elif func.attr in _CELL_ONLY_METHODS and (on_self or on_sub):
            info = analyzer(ctx).self_info(analyzer(ctx).owner_class(ctx.function))
            if on_self or (isinstance(recv, ast.Attribute) and recv.attr in info.cells):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`Cell.{func.attr}` cannot be called in compiled code (JIT-forbidden API); call it before compiling",
                )
        elif func.attr == "assign_value" and not on_self:
            yield ctx.diagnostic(
                self,
                node,
                "`Tensor.assign_value` cannot be called in compiled code (JIT-forbidden API); use `ops.assign`",
            )
        elif func.attr in ("set_data", "init_data"):
            # `self.w.set_data(...)`, or through a local alias (`p = self.w`)
            attr = recv.attr if on_sub and isinstance(recv, ast.Attribute) else None
            if isinstance(recv, ast.Name) and ctx.function is not None:
                attr = _self_alias(recv.id, ctx.function)
            info = analyzer(ctx).self_info(analyzer(ctx).owner_class(ctx.function))
            if (
                (attr is not None and attr in info.parameters)
                or _is_parameter(recv, info)
                or _local_cell_parameter(recv, ctx, info)
                or _listed_cell_parameter(recv, ctx)
                or (
                    fn is not None
                    and (
                        parameter_element(recv, ctx, fn)
                        or (func.attr == "set_data" and argument_parameter(recv, ctx, fn))
                        or module_cell_parameter(recv, ctx, fn)
                        or module_held_parameter(recv, ctx, fn)
                    )
                )
            ):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`Parameter.{func.attr}` cannot be called in compiled code (JIT-forbidden API); use `ops.assign`",
                )


    def _attribute_reads(self, tree: ast.Module, ctx: Context) -> Iterable[Diagnostic]:
        reads = _reads_refused_name(ctx)
        getattrs = _getattr_of_refused_name(ctx)
        if not (reads or getattrs):
            return
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            scope = ctx.scopes.scope_for(fn)
            if scope is None:
                continue
            for node in ast.walk(fn):
                if reads and isinstance(node, ast.Attribute):
                    found: Iterable[Diagnostic] = self._attribute(node, fn, ctx)
                elif getattrs and type(node) is ast.Call:
                    found = self._getattr_read(node, fn, ctx)
                else:
                    continue
                for d in found:
                    if not in_dead_branch(ctx, scope.function, d.span):
                        yield d

    def _getattr_read(self, node: ast.Call, fn: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """`getattr(p, "name")` of a Parameter: the graph resolves a constant attribute name
        as `p.name` and refuses it alike (measured, written/heldout36d `r2_param_name_getattr`,
        probes `fix36c_getattr_*`, `requires_grad` too); with a default, `getattr(p, "name",
        "")`, it compiles."""
        f = node.func
        if not (isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) == 2 and not node.keywords):
            return
        a = analyzer(ctx)
        key: ast.expr | None = node.args[1]
        if isinstance(key, ast.Name):
            key = a.single_assignment(key.id, fn)  # `attr = "name"` (probe `fix36c_getattr_key_const_name_var`)
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return
        refused = calls_table.refused_attributes()["parameter_attributes"]
        attr = key.value
        if attr not in refused or ctx.qualname(f) not in (None, "builtins.getattr", "getattr"):
            return
        # (unlike `n = self.w.name`, `n = getattr(self.w, "name")` fails with `n` never read:
        # probe `fix36c_getattr_name_unused`)
        recv = node.args[0]
        info = a.self_info(a.owner_class(fn))
        if not _names_parameter(recv, fn, ctx, info):
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`getattr(..., {attr!r})` of a Parameter reads `Parameter.{attr}`, which cannot be used in compiled code (MindSpore: {refused[attr].split(': ', 1)[-1][:120]})",
        )

    def _attribute(self, node: ast.Attribute, fn: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """Reading an attribute MindSpore refuses on a Parameter (`self.w.name`,
        `self.fc.weight.requires_grad`) or a generator method of a Cell
        (`self.cells_and_names`), from its measured tables (`ms_calls.json`)."""
        attr = node.attr
        refused = calls_table.refused_attributes()
        if isinstance(node.ctx, ast.Store):
            yield from self._parameter_attribute_set(node, fn, ctx)
            return
        on_param = attr in refused["parameter_attributes"]
        on_cell = attr in refused["cell_attributes"] and attr not in _CALL_HANDLED
        if not (on_param or on_cell) or not isinstance(node.ctx, ast.Load):
            return
        parent = ctx.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node and attr in _CALL_HANDLED:
            return  # reported by the call branch
        if _unread_value(node, parent, fn):
            return
        made = _primitive_made(node.value, ctx, fn)
        if made is not None:
            # measured (probes `av_prim_name_read`, `av_prim_local_name_read`): `self.op.name`
            # of a Primitive fails at both levels ("'Function' object has no attribute 'name'")
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node)}`: a Primitive (`{made}`) in compiled code is only callable on its inputs, its Python attributes are not available there (MindSpore: 'Function' object has no attribute '{attr}'); read it in `__init__`",
            )
            return
        a = analyzer(ctx)
        info = a.self_info(a.owner_class(fn))
        recv = node.value
        if on_cell and (
            (isinstance(recv, ast.Name) and recv.id == "self")
            or module_cell(recv, ctx, fn)
            or (attr in _CELL_GENERATORS and _cell_generator_receiver(recv, attr, fn, ctx, info))
        ):
            what = f"Cell.{attr}"
            said = refused["cell_attributes"][attr]
        elif on_param and _names_parameter(recv, fn, ctx, info):
            what = f"Parameter.{attr}"
            said = refused["parameter_attributes"][attr]
        else:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{what}` cannot be used in compiled code (MindSpore: {said.split(': ', 1)[-1][:120]})",
        )

    def _parameter_attribute_set(
        self, node: ast.Attribute, fn: ast.AST, ctx: Context
    ) -> Iterable[Diagnostic]:
        """`self.fc.weight.requires_grad = False`, `self.w.name = ...` in compiled code:
        measured, MindSpore refuses any attribute assignment on a Parameter at both levels
        ("Do not support to set attribute for a parameter")."""
        a = analyzer(ctx)
        info = a.self_info(a.owner_class(fn))
        recv = node.value
        if (
            _is_parameter(recv, info)
            or parameter_element(recv, ctx, fn)
            or module_cell_parameter(recv, ctx, fn)
        ):
            yield ctx.diagnostic(
                self,
                node,
                f"setting `.{node.attr}` of a Parameter in compiled code fails (MindSpore: Do not support to set attribute for a parameter); set it before compiling",
            )


#: capitalised names of mindspore.ops that are not Primitive classes (MindSpore 2.10:
#: `issubclass(getattr(ops, n), Primitive)` is false for exactly these)
_NOT_PRIMITIVES = frozenset(
    {
        "AiCPURegOp", "AkgAscendRegOp", "AkgGpuRegOp", "CpuRegOp", "CustomOpBuilder", "CustomRegOp",
        "DataType", "GradOperation", "HyperMap", "J", "Map", "MultitypeFuncGraph", "P", "P2POp",
        "ReduceOp", "SliceGetItem", "TBERegOp", "TCPStore", "Tensor", "Primitive",
        "PrimitiveWithInfer", "PrimitiveWithCheck", "Partial", "Custom",
    }
)


#: the public methods of `mindspore.ops.Primitive` (MindSpore 2.10: `dir(Primitive)`)
_PRIMITIVE_METHODS = frozenset(
    {
        "add_attr", "add_prim_attr", "check_elim", "del_attr", "del_prim_attr", "get_attr_dict",
        "get_user_data", "init_prim_io_names", "place", "recompute", "set_const_input_indexes",
        "set_const_prim", "set_device", "set_hook_fn", "set_inplace_prim", "set_instance_name",
        "set_prim_instance_name", "set_prim_type", "set_signatures", "set_stage", "set_user_data",
        "shard", "update_parameter",
    }
)


def _module_cell(qual: str, ctx: Context) -> bool:
    """Is `qual` a class of this module with a `construct` (a Cell)?"""
    module, _, name = qual.rpartition(".")
    if module != ctx.scopes.info.module:
        return False
    cls = next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == name), None)
    return cls is not None and any(isinstance(f, ast.FunctionDef) and f.name == "construct" for f in cls.body)


def _module_value(name: str, fn: ast.AST, ctx: Context) -> ast.expr | None:
    """The value of the one `name = value` at module level, when `fn` does not bind `name`
    itself: a primitive a jit function reads as a global (`matmul = ops.MatMul()`; measured,
    written/heldout31b `r2_prim_add_prim_attr_in_jit_function`: "'Function' object has no
    attribute 'add_prim_attr'" at both levels)."""
    if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(fn)):
        return None
    values = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    ]
    return values[0] if len(values) == 1 else None


def _primitive_made(recv: ast.expr, ctx: Context, fn: ast.AST | None = None, method: str = "") -> str | None:
    """The Primitive class `recv` holds (`self.op` bound to `ops.ReLU()` in `__init__`, a
    local `op = ops.ReLU()`), or None. Measured (written/apisurface probes `av_prim_*`):
    calling a Primitive's methods in compiled code (`add_prim_attr`, `del_prim_attr`,
    `set_prim_instance_name`, `shard`, `recompute`) fails at both levels with "'Function'
    object has no attribute ..."; in `__init__` they are fine."""
    fn = fn or ctx.function
    if fn is None:
        return None
    made: str | None = None
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(fn)
        if cls is None:
            return None
        scopes = ctx.scopes
        made = scopes.attribute_class(f"{scopes.info.module}.{cls.name}", recv.attr)
    elif isinstance(recv, ast.Name) and recv.id not in ctx.scopes.info.imports:
        bound = analyzer(ctx).single_assignment(recv.id, fn) or _module_value(recv.id, fn, ctx)
        if isinstance(bound, ast.Call):
            made = ctx.qualname(bound.func)
    if made is None and method == "recompute":
        made = _container_item(recv, fn, ctx)
    if made is None:
        return None
    if made.startswith(("mindspore.nn.", "mindspore.mint.nn.")) and method == "recompute":
        # `self.block.recompute()` of a sub-cell: `Cell.recompute(**kwargs)` fails while
        # compiling at both levels with "For 'recompute', keyword '%s' is not recognized!"
        # (measured, written/heldout31b `recompute_called_in_construct`, probes `fix31e_rc_*`)
        return made if made.rsplit(".", 1)[-1][:1].isupper() else None
    if method == "recompute" and _module_cell(made, ctx):
        return made  # a Cell of this file (probe `fix31e_rc_user_block`: the same message)
    if not made.startswith("mindspore.ops."):
        return None
    last = made.rsplit(".", 1)[-1]
    return made if last[:1].isupper() and last not in _NOT_PRIMITIVES else None


def _container_item(recv: ast.expr, fn: ast.AST, ctx: Context) -> str | None:
    """The container class (`mindspore.nn.CellList` / `mindspore.nn.SequentialCell`) when
    `recv` is one of its cells: `self.layers[0]`, or the loop variable of `for layer in
    self.layers` / `for i, layer in enumerate(self.layers)` in `fn`. `recompute()` of such a
    cell in compiled code fails as of a named sub-cell (measured, written/heldout34a case
    `r2_layers_recompute_called_in_construct_training`, probes `fix34f_rc_*`: "For
    'recompute', keyword '%s' is not recognized!")."""
    held: ast.expr | None = None
    if type(recv) is ast.Subscript:
        held = recv.value
    elif type(recv) is ast.Name:
        for n in ast.walk(fn):
            if type(n) is not ast.For:
                continue
            it, target = n.iter, n.target
            if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "enumerate" and len(it.args) == 1:
                it = it.args[0]
                target = target.elts[1] if type(target) is ast.Tuple and len(target.elts) == 2 else None  # type: ignore[assignment]
            if type(target) is ast.Name and target.id == recv.id:
                held = it
                break
    if held is None or not _container_sub_cell(held, ctx):
        return None
    values = analyzer(ctx).self_values(analyzer(ctx).owner_class(fn)).get(held.attr, [])  # type: ignore[attr-defined, arg-type]
    return ctx.qualname(values[0].func) if len(values) == 1 and type(values[0]) is ast.Call else None


def _unread_value(node: ast.expr, parent: ast.AST | None, fn: ast.AST) -> bool:
    """`n = self.w.name` with `n` never read: MindSpore compiles only what the graph's output
    depends on, so the read is never resolved (measured, written/apisurface probe
    `av_param_name_in_construct_neighbour` compiles at both levels; reading `n` fails)."""
    if not (isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if not isinstance(target, ast.Name):
        return False
    return not any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id == target.id for n in ast.walk(fn)
    )


@functools.cache
def _refused_names() -> tuple[str, ...]:
    refused = calls_table.refused_attributes()
    return tuple(sorted({*refused["cell_attributes"], *refused["parameter_attributes"]} - _CALL_HANDLED))


@functools.cache
def _refused_pattern() -> re.Pattern[str]:
    return re.compile(r"\.(?:" + literal_alternation(_refused_names()) + r")\b")  # (as a trie: 2.3x faster)


def _reads_refused_name(ctx: Context) -> bool:
    """Could the file read a refused attribute as `.<name>` (a cheap test of its text)?"""
    text = ctx.text
    # the pattern starts at a dot (cheap to scan): without a hit nothing is walked; nor
    # without one of its `.<name>` in the text (most names are no word of it: a lookup)
    # A match is `.` and one of the names as a whole word (`\b` after it; every name is
    # an identifier): in an ASCII text, where the file's words are counted, the pattern
    # is searched only when one of the names is a word of the text (`.set_` in
    # `ms.set_context` passed the substring test, and the search cost 2.7 M instructions)
    words = ctx.text_words()
    if words is not None:
        # a match is `.` and a name that is a whole word of the text, spelled so: without
        # any such spelling (a name written only as `name=`, say) there is nothing to
        # search for (a substring test per word present costs a fraction of the search)
        if not any("." + n in text for n in _refused_names() if n in words):
            return False
    elif not any(ctx.mentions("." + n) for n in _refused_names()):
        return False
    return _refused_pattern().search(text) is not None


def _getattr_of_refused_name(ctx: Context) -> bool:
    """Could the file read a refused Parameter attribute as `getattr(p, "<name>")`? Its
    text must call `getattr(` and quote one of the names (rare: a word test first)."""
    if not ctx.mentions("getattr("):
        return False
    words = ctx.text_words()
    text = ctx.text
    return any(
        f'"{n}"' in text or f"'{n}'" in text
        for n in calls_table.refused_attributes()["parameter_attributes"]
        if words is None or n in words
    )


#: Cell methods returning the sub-cells as a Python container built at run time
_CELL_CONTAINERS = frozenset({"cells", "name_cells"})
#: every method name `_method_call` may report
_METHOD_ATTRS = _CELL_CONTAINERS | _CELL_METHODS | _CELL_ONLY_METHODS | {"assign_value", "set_data", "init_data"}


def _iterated(call: ast.Call, ctx: Context) -> bool:
    """Is `call` (or its `.items()` / `.values()` / `.keys()`) what a loop iterates?"""
    node: ast.AST = call
    parent = ctx.parent(node)
    if isinstance(parent, ast.Attribute) and parent.attr in ("items", "values", "keys"):
        outer = ctx.parent(parent)
        if isinstance(outer, ast.Call):
            node, parent = outer, ctx.parent(outer)
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return True
    # measured: `len(list(self.cells()))` and `tuple(self.cells())[1](x)` fail the same way
    # (only `cells`: `list(self.name_cells().keys())` compiles)
    return (
        node is call
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "cells"
        and isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("list", "tuple")
        and parent.args[:1] == [call]
    )


#: sub-cell containers whose `cells()` / `name_cells()` a loop in compiled code cannot walk
_CONTAINER_CELLS = frozenset({"mindspore.nn.SequentialCell", "mindspore.nn.CellList"})


def _container_sub_cell(recv: ast.expr, ctx: Context) -> bool:
    """`self.body`, an `nn.SequentialCell` / `nn.CellList` `__init__` builds
    (`self.vgg_net = nn.SequentialCell(modified)`): a loop over its `name_cells()` /
    `cells()` calling them fails as over `self.name_cells()` does (measured,
    written/heldout32a case `sr_vgg_extractor_name_cells_loop`, probes `fix32d_nc_*`). Not
    any sub-cell: `len(list(self.fc1.cells()))` of an `nn.Dense`, which has none, compiles
    (difftest seed 11800162)."""
    if not (type(recv) is ast.Attribute and type(recv.value) is ast.Name and recv.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None:
        return False
    values = a.self_values(cls).get(recv.attr, [])
    if len(values) != 1 or type(values[0]) is not ast.Call:
        return False
    made = values[0].func
    if ctx.qualname(made) in _CONTAINER_CELLS:
        return True
    return type(made) is ast.Name and _holds_cells(made.id, ctx)


def _holds_cells(cls_name: str, ctx: Context) -> bool:
    """Does the file's class `cls_name` store a Cell on `self` in its `__init__` (an
    `nn.<Layer>(...)` or an instance of another class of the file)? Its `name_cells()`
    then holds cells, which compiled code cannot read (measured, written/heldout32a probe
    `fix33b_nc_userblock_keys_len`: "The pointer[node] is null" at LAX and STRICT; of an
    `nn.Conv2d`, which holds none, `fix33b_nc_leaf_keys_len` compiles)."""
    classes = {c.name: c for c in ctx.tree.body if isinstance(c, ast.ClassDef)}
    cls = classes.get(cls_name)
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if cls else None
    if init is None:
        return False
    for st in ast.walk(init):
        if not (
            isinstance(st, ast.Assign)
            and isinstance(st.value, ast.Call)
            and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in st.targets)
        ):
            continue
        f = st.value.func
        q = ctx.qualname(f) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("mindspore.nn.") and last[:1].isupper():
            return True
        if type(f) is ast.Name and f.id in classes and f.id != cls_name:
            return True
    return False


def _discarded(call: ast.Call, ctx: Context) -> bool:
    """Is `call` a statement of its own, its value unused?"""
    return isinstance(ctx.parent(call), ast.Expr)


def _looped_over(call: ast.Call, ctx: Context) -> bool:
    """Is `call` (or its `.items()` / `.values()` / `.keys()`) what a `for` or a
    comprehension iterates?"""
    node: ast.AST = call
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr in ("items", "values", "keys"):
        outer = ctx.parent(parent)
        if isinstance(outer, ast.Call):
            node, parent = outer, ctx.parent(outer)
    return isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node


#: forbidden Cell methods no other common type has: a local name they are called on is a
#: Cell (or fails anyway) unless the file defines a method of that name
_CELL_PARAMETER_METHODS = frozenset(
    {"get_parameters", "trainable_params", "untrainable_params", "parameters_dict", "parameters_and_names", "init_parameters_data"}
)


#: Cell methods that are generators: compiled, MindSpore stops with "Unsupported expression
#: 'Yield'" whatever Cell they are called on
_CELL_GENERATORS = frozenset({"cells_and_names", "parameters_and_names"})


def _cell_generator_receiver(recv: ast.expr, attr: str, fn: ast.AST, ctx: Context, info: SelfInfo) -> bool:
    """`self.body.cells_and_names()` of a sub-cell, or `net.cells_and_names()` of a parameter
    or local of the compiled function `fn` (SpikingJelly's `functional.reset_net(net)` called
    from `construct` with `self`). Measured (written/heldout41a case
    `resetnet_called_inside_construct`, probes `fix41a_gen_*`): "Unsupported expression
    'Yield'" at LAX and STRICT, as on `self`; the same walk in `__init__` compiles."""
    if (
        isinstance(recv, ast.Attribute)
        and isinstance(recv.value, ast.Name)
        and recv.value.id == "self"
        and recv.attr in info.cells
    ):
        return True
    return _local_with_cell_only_method(recv, attr, fn, ctx)


def _local_with_cell_only_method(recv: ast.expr, method: str, fn: ast.AST, ctx: Context) -> bool:
    """`net.get_parameters()` where `net` is a parameter or a local of the compiled function
    `fn` (a helper given `self.netD`, a loop over `(self.netG, self.netD)` or over `[nets]`,
    `net = self.netD`), for a method only a Cell has. Measured (written/heldout32a case
    `gan_set_requires_grad_in_construct`, pix2pix's `set_requires_grad`, probes `fix32d_gp_*`):
    "Failed to compile in GRAPH_MODE because the method or function
    'mindspore.nn.cell.Cell.get_parameters' is not supported in 'construct'" at LAX and
    STRICT; the same helper never called from `construct` compiles. Also an item of such a
    local (`model_pair[0].get_parameters()` for `model_pair` in a list attribute of cell
    pairs, ALBEF's `_momentum_update`: the same error, measured with written/heldout37b case
    `albef_momentum_update_zip_params_assign`)."""
    while type(recv) is ast.Subscript:
        recv = recv.value
    if method not in _CELL_PARAMETER_METHODS | _CELL_GENERATORS or type(recv) is not ast.Name or recv.id == "self":
        return False
    if not _binds_in_function(fn, recv.id):
        return False  # a global: a module, or an object of another library
    return not any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method for n in ast.walk(ctx.tree)
    )


def _binds_in_function(fn: ast.AST, name: str) -> bool:
    args = getattr(fn, "args", None)
    if args is not None and any(
        a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a is not None
    ):
        return True
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for n in ast.walk(fn))


#: attributes the call branch above already reports when they are called
_CALL_HANDLED = _CELL_METHODS | _CELL_ONLY_METHODS | {"set_data", "init_data", "assign_value"}
_LAYER_PARAMETERS = LAYER_PARAMETERS


def _names_parameter(recv: ast.expr, fn: ast.AST, ctx: Context, info: SelfInfo) -> bool:
    """Does `recv` name a Parameter in compiled code, by any of the ways the rule knows one:
    held on `self` or a sub-cell, an element of a Parameter list, a module-level Cell's, one
    passed to a helper, an optimizer's step or learning rate, or one a mapper hands to a
    `MultitypeFuncGraph` overload? (The attribute read `p.name` and `getattr(p, "name")`
    ask the same question.)"""
    return (
        _is_parameter(recv, info)
        or parameter_element(recv, ctx, fn)
        or module_cell_parameter(recv, ctx, fn)
        or _passed_parameter(recv, fn, ctx, info)
        or step_parameter(recv, ctx, fn)
        or lr_parameter(recv, ctx, fn)
        or mapped_parameter(recv, ctx, fn)
    )


def _is_parameter(recv: ast.expr, info: SelfInfo) -> bool:
    """`self.w` made a Parameter in `__init__`, or `self.fc.weight` of a sub-cell."""
    if not (isinstance(recv, ast.Attribute) and isinstance(recv.value, (ast.Name, ast.Attribute))):
        return False
    inner = recv.value
    if isinstance(inner, ast.Name):
        return inner.id == "self" and recv.attr in info.parameters
    return (
        isinstance(inner.value, ast.Name)
        and inner.value.id == "self"
        and inner.attr in info.cells
        and recv.attr in _LAYER_PARAMETERS
    )


def _passed_parameter(recv: ast.expr, fn: ast.AST, ctx: Context, info: SelfInfo) -> bool:
    """`p` or `layer.weight` in a helper method whose parameter `p` / `layer` every call
    site fills with `self.w` / `self.l1` (`self.masked(self.l1)`): the same Parameter as
    `self.w` / `self.l1.weight` (measured, heldout16a `prune_lottery_masks_by_name_dict` and
    probes `fb16_pn_*`: `layer.weight.name` fails as `self.l1.weight.name` does)."""
    base = recv.value if isinstance(recv, ast.Attribute) else recv
    if not isinstance(base, ast.Name) or base.id == "self":
        return False
    passed = analyzer(ctx).passed_arguments(base.id, fn)
    if not passed:
        return False
    for arg in passed:
        same = ast.Attribute(value=arg, attr=recv.attr, ctx=ast.Load()) if isinstance(recv, ast.Attribute) else arg
        if not _is_parameter(same, info):
            return False
    return True


def _local_cell_parameter(recv: ast.expr, ctx: Context, info: SelfInfo) -> bool:
    """`self.inner.w` where `self.inner` is built from a Cell class of this file whose
    `__init__` makes `self.w` a Parameter (measured: `set_data` on it fails like on `self.w`)."""
    if not (
        isinstance(recv, ast.Attribute)
        and isinstance(recv.value, ast.Attribute)
        and isinstance(recv.value.value, ast.Name)
        and recv.value.value.id == "self"
        and recv.value.attr in info.cells
        and ctx.function is not None
    ):
        return False
    a = analyzer(ctx)
    owner = a.owner_class(ctx.function)
    values = a.self_values(owner).get(recv.value.attr, []) if owner is not None else []
    classes = {
        stmt.name: stmt for stmt in ctx.tree.body if isinstance(stmt, ast.ClassDef)
    }
    for v in values:
        if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes):
            return False
        if recv.attr not in a.self_info(classes[v.func.id]).parameters:
            return False
    return bool(values)


def _listed_cell_parameter(recv: ast.expr, ctx: Context) -> bool:
    """`layer.w` in `for layer in self.layers:` (also over `enumerate(self.layers)`) or
    `self.layers[i].w`, where `self.layers` is a cell list of one class whose `w` is a
    Parameter (its `__init__` makes it one, or a built-in layer's `weight` / `bias`...):
    the element is the cell itself (measured, written/heldout19a probes `sd19_*`:
    `layer.weight.set_data(...)` fails at LAX and STRICT, "the 'Parameter' object's method
    'set_data' is not supported"; reading `layer.weight` and `ops.assign` compile)."""
    func = ctx.function
    if not isinstance(recv, ast.Attribute) or func is None:
        return False
    cell = recv.value
    a = analyzer(ctx)
    owner = a.owner_class(func)
    if owner is None:
        return False
    listed = cell_list_classes(owner)
    attr: str | None = None
    if isinstance(cell, ast.Subscript):
        attr = self_attr(cell.value)
    elif isinstance(cell, ast.Name) and a.first_binding_line(cell.id, func) is not None:
        loops = [
            n
            for n in ast.walk(func)
            if isinstance(n, ast.For)
            and any(isinstance(t, ast.Name) and t.id == cell.id for t in ast.walk(n.target))
        ]
        stores = sum(
            1 for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == cell.id and isinstance(n.ctx, ast.Store)
        )
        if len(loops) == 1 and stores == 1:
            target, it = loops[0].target, loops[0].iter
            if isinstance(target, ast.Name):
                attr = self_attr(it)
            elif (
                isinstance(target, ast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[1], ast.Name)
                and target.elts[1].id == cell.id
                and isinstance(it, ast.Call)
                and ctx.qualname(it.func) == "builtins.enumerate"
                and len(it.args) == 1
            ):
                attr = self_attr(it.args[0])
    cls_name = listed.get(attr) if attr is not None else None
    if cls_name is None:
        return False
    classes = {st.name: st for st in ctx.tree.body if isinstance(st, ast.ClassDef)}
    if cls_name in classes:
        return recv.attr in a.self_info(classes[cls_name]).parameters
    return recv.attr in LAYER_PARAMETERS


def _self_alias(name: str, func: ast.AST) -> str | None:
    """`attr` when `name` is bound exactly once in `func`, by `name = self.attr`."""
    stores = 0
    attr: str | None = None
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            stores += 1
        elif isinstance(n, ast.Assign) and len(n.targets) == 1:
            t, v = n.targets[0], n.value
            if (
                isinstance(t, ast.Name)
                and t.id == name
                and isinstance(v, ast.Attribute)
                and isinstance(v.value, ast.Name)
                and v.value.id == "self"
            ):
                attr = v.attr
    return attr if stores == 1 else None


def _new_cell(recv: ast.expr, ctx: Context) -> bool:
    """A Cell built in place (`Net().get_parameters()`, `nn.Dense(2, 2).trainable_params()`):
    measured in MindSpore's test_jit_forbidden_api (`..._get_parameters2`,
    `..._untrainable_params2`), refused as on `self`; written/mstests probes `p116_*`."""
    if not isinstance(recv, ast.Call):
        return False
    q = ctx.qualname(recv.func)
    if q is not None:
        return q.startswith("mindspore.nn.") and q.rpartition(".")[2][:1].isupper() or ctx.scopes.is_cell_class(q)
    if not isinstance(recv.func, ast.Name):
        return False
    name = recv.func.id
    return any(
        isinstance(c, ast.ClassDef) and c.name == name and any("Cell" in ast.unparse(b) for b in c.bases)
        for c in ast.walk(ctx.tree)
    )


def _module_sub_cell(recv: ast.expr, ctx: Context, fn: ast.AST) -> bool:
    """`model.online` / `model.online.fc` in a jit function, with `model` a Cell built at
    module level: a sub-cell of it, refused as the cell itself (measured, written/heldout27a
    `r2_step_ema_trainable_params_in_jit` and probes `fix27c_jit_*`: `model.online.
    trainable_params()` in a module-level `@ms.jit` function fails at both levels, as
    `self.online.trainable_params()` does in `construct`)."""
    base = recv
    for _ in range(3):
        if not isinstance(base, ast.Attribute):
            break
        base = base.value
    return base is not recv and module_cell(base, ctx, fn)

