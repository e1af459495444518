"""MS245: `ms.Tensor(...)` in a compiled function that reads a module-level `Parameter`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names, module_value_once, own_nodes

#: the constructor whose module-attribute spelling fails next to a free Parameter
_TENSOR = "mindspore.Tensor"
_PARAMETER = "mindspore.Parameter"


@rule(code="MS245", name="tensor-call-beside-global-parameter", severity="error", family="graphmode")
class TensorCallBesideGlobalParameter(GraphRule):
    """## What it does
    Flags `ms.Tensor(...)` (the constructor spelled as an attribute of the imported module:
    `ms.Tensor`, `mindspore.Tensor`) in a compiled function (an `@ms.jit` function, a
    `construct`, a function compiled by a gradient in one) that also reads, by its name, a
    module-level `Parameter` (`c = ms.Parameter(...)` at module level, or a module-level
    tuple, list or dict holding one): `return x + c + ms.Tensor(1.0, ms.float32)`,
    `ops.assign_add(step, ms.Tensor(1, ms.int32))`.

    ## Why is this bad?
    MindSpore 2.10 evaluates that constructor call as Python (JIT Fallback) in a namespace
    that is not the function's module once the graph holds a free `Parameter`: the module
    alias is not there, and compiling stops at every syntax level with
    `NameError: name 'ms' is not defined` (or `TypeError: 'NoneType' object does not
    support item assignment` when the function is differentiated). The same call in a
    function without the Parameter, `Tensor(...)` imported by name (`from mindspore import
    Tensor`), bound to a module-level alias (`T = ms.Tensor`) or spelled through a submodule
    (`ms.common.Tensor`), `ms.tensor(...)`,
    `ops.ones(..., ms.float32)`, and the Parameter held by a Cell (`self.c`) or read in a
    helper function all compile.

    ## Example
    ```python
    step = ms.Parameter(ms.Tensor(0, ms.int32), name="step", requires_grad=False)

    @ms.jit
    def train_step(x, y):
        loss, g = vg(x, y)
        opt(g)
        ops.assign_add(step, ms.Tensor(1, ms.int32))
        return loss
    ```

    ## Use instead
    Build the tensor outside (a module-level constant), import `Tensor` by name, or hold the
    Parameter on a Cell:
    ```python
    ONE = ms.Tensor(1, ms.int32)

    @ms.jit
    def train_step(x, y):
        loss, g = vg(x, y)
        opt(g)
        ops.assign_add(step, ONE)
        return loss
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (rejected at every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout33b`
      (`r2_train_param_counter_unique_name`) and its probes `fix33d_gp_*`, `fix33d_gp2_*`:
      `ms.Tensor` / `mindspore.Tensor` with and without a dtype, of a numpy array, before
      or after the read, of an argument or of its shape, under an `if`, next to a read or an
      `ops.assign_add` of the Parameter or of a module-level tuple, list or dict holding it, in an `@ms.jit` function under PYNATIVE and GRAPH
      mode, in a Cell's `construct` (jitted or under GRAPH_MODE) and in a loss function
      under `value_and_grad` are rejected; `from mindspore import Tensor`, `T = ms.Tensor`,
      `ms.common.Tensor`, `ms.tensor`, `ms.numpy.ones`, `ops.ones(..., ms.float32)`, `math.sqrt`, numpy calls,
      a module-level Tensor instead of the Parameter, a Cell's own Parameter (`net.weight`,
      `self.c`), and the Parameter or the constructor moved into a helper or a lambda compile.
    """

    nodes = (ast.Call,)
    words = ("Parameter",)
    calls = frozenset({"Tensor"})
    callee = (ast.Attribute,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        func = ctx.function
        if func is None or isinstance(func, ast.Lambda) or not isinstance(node.func, ast.Attribute):
            return ()
        if not isinstance(node.func.value, ast.Name) or ctx.qualname(node.func) != _TENSOR:
            return ()
        read = _global_parameter_read(func, ctx)
        if read is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                node.func,
                f"`{ctx.segment(node.func)}(...)` in a compiled function that reads the module-level Parameter `{read}`: MindSpore 2.10 evaluates this call outside the module's namespace then and stops with \"NameError: name '{node.func.value.id}' is not defined\"; build the tensor at module level, or use `Tensor` imported by name",
            )
        ]


def _global_parameter_read(func: ast.AST, ctx: Context) -> str | None:
    """The first module-level Parameter (or tuple of them) `func` itself reads by name, or
    None; once per function."""
    key = ("MS245-global-parameter", id(func))
    if key in ctx.cache:
        hit: str | None = ctx.cache[key]
        return hit
    local = bound_names(func, ctx)
    found: str | None = None
    seen: set[str] = set()
    for n in own_nodes(func):
        if type(n) is ast.Name and isinstance(n.ctx, ast.Load) and n.id not in local and n.id not in seen:
            seen.add(n.id)
            if _is_global_parameter(n.id, ctx):
                found = n.id
                break
    ctx.cache[key] = found
    return found


def _is_global_parameter(name: str, ctx: Context) -> bool:
    """`name` bound once at module level to a Parameter, or to a tuple, list or dict display
    holding one (measured: `(c,)`, `[c]`, `{"c": c}` read as `cs[0]` / `state["c"]` fail alike)."""
    value = module_value_once(name, ctx)
    if isinstance(value, (ast.Tuple, ast.List)):
        return any(_is_parameter(e, ctx) for e in value.elts)
    if isinstance(value, ast.Dict):
        return any(_is_parameter(e, ctx) for e in value.values)
    return _is_parameter_call(value, ctx)


def _is_parameter(e: ast.expr, ctx: Context) -> bool:
    """A `Parameter(...)` call, or a name bound once at module level to one."""
    return _is_parameter_call(module_value_once(e.id, ctx) if isinstance(e, ast.Name) else e, ctx)


def _is_parameter_call(value: ast.expr | None, ctx: Context) -> bool:
    return isinstance(value, ast.Call) and ctx.qualname(value.func) == _PARAMETER
