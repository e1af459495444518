"""MS139: (LAX) the values of a JIT Fallback container unpacked into a call before other arguments."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.method_statement_on_call import interpreted_binding

#: wrappers that keep the unpacked object a JIT Fallback value (measured: `*list(d.values())`
#: and `*tuple(d.values())` fail as `*d.values()` does)
_WRAPPERS = frozenset({"builtins.list", "builtins.tuple"})


@rule(code="MS139", name="fallback-values-unpacked", severity="error", family="graphmode")
class FallbackValuesUnpacked(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags `*d.values()` in the arguments of a call in
    compiled code when `d` is a container LAX builds as a Python object (JIT Fallback):
    `dict(...)` or `collections.OrderedDict(...)` given graph values (tensors, Parameters),
    and other arguments follow the unpacked values (`f(*params.values(), x)`,
    `ops.grad(loss)(*params.values(), xs, ys)`, `f(*d.values(), c=z)`, also through
    `list(...)` / `tuple(...)`). Unpacked last (`f(x, *d.values())`) or alone, it compiles;
    so does a dict display (`{"a": x}`), which the graph builds itself.

    ## Why is this bad?
    MindSpore's graph unpacks a starred argument only when it is a graph sequence; the
    Python object's values view is not one, and with more arguments after it the call
    fails to compile: `RuntimeError: Invalid input args for unpack call.` (with keyword
    arguments after it: "argument after ** must be a mapping, not tuple"). STRICT refuses
    the `dict(...)` / `OrderedDict(...)` call itself (MS131).

    ## Example
    ```python
    def construct(self, xs, ys):
        params = OrderedDict(w=self.w, b=self.b)
        grads = ops.grad(inner_loss, grad_position=(0, 1))(*params.values(), xs, ys)
        ...
    ```

    ## Use instead
    Pass the values by name, or keep them in a tuple:
    ```python
    def construct(self, xs, ys):
        grads = ops.grad(inner_loss, grad_position=(0, 1))(self.w, self.b, xs, ys)
        ...
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback at LAX): the object it builds is not a graph sequence.
    - Measured with MindSpore 2.10: written/heldout15b probes `ls17b_star_*` and case
      `r2_meta_inner_loop_param_dict`.
    """

    nodes = (ast.Call,)
    words = ("values",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        args = node.args
        # unpacked last (`f(x, *d.values())`) compiles: only a star before another argument
        last = len(args) - (0 if node.keywords else 1)
        star = next((a for a in args[:last] if type(a) is ast.Starred), None)
        if star is None or ctx.scope is None or ctx.scope.level != "lax" or ctx.function is None:
            return
        yield from self._star(star, node, ctx)

    def _star(self, star: ast.Starred, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        value = star.value
        if (
            isinstance(value, ast.Call)
            and len(value.args) == 1
            and not value.keywords
            and ctx.qualname(value.func) in _WRAPPERS
        ):
            value = value.args[0]
        if not (
            isinstance(value, ast.Call)
            and not value.args
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "values"
            and isinstance(value.func.value, ast.Name)
        ):
            return
        name = value.func.value.id
        assert ctx.function is not None
        found = interpreted_binding(name, call, ctx.function, ctx)
        if found is None:
            return
        built = found[0]
        yield ctx.diagnostic(
            self,
            star,
            f"`{name}` is a Python object under LAX (`{ctx.segment(built.func)}(...)` of graph values runs by JIT "
            f"Fallback): its values cannot be unpacked before other arguments (MindSpore: Invalid input args for "
            f"unpack call); pass the values themselves, or unpack them last",
        )
