"""MS241: `ms.jacfwd` / `ms.jacrev` of a function another transform builds in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.vmap_unsupported_body import compiled_vmaps, mapped_function

#: the Jacobian transforms, by the qualified name's last part
_JACOBIANS = frozenset({"jacfwd", "jacrev"})
#: transforms whose result is a function MindSpore builds while compiling
_TRANSFORMS = frozenset({"grad", "value_and_grad", "jacfwd", "jacrev", "vmap"})


@rule(code="MS241", name="jacobian-of-transform", severity="error", family="graphmode")
class JacobianOfTransform(GraphRule):
    """## What it does
    Flags `ms.jacfwd(fn)` / `ms.jacrev(fn)` in compiled code (an `@ms.jit` function,
    `construct`, a helper they call or a function `ms.vmap` maps there) when `fn` is a
    function another transform builds there: `ms.grad(u)`, `ms.value_and_grad(u)`,
    `ms.jacfwd(u)`, `ms.jacrev(u)`, `ms.vmap(u)`, in place or through a local bound once
    to one (the Hessian as `ms.jacfwd(ms.grad(u))`).

    ## Why is this bad?
    MindSpore 2.10 builds `jacfwd` and `jacrev` from `vmap` over a `jvp` / `vjp` of the
    function they are given; a function that a transform made inside the graph reaches
    them as a graph parameter they cannot evaluate, and compiling stops at every syntax
    level with `RuntimeError: Illegal AnfNode for evaluating, node:
    @grad_u:param_Parameter` (`@jacrev:param_fn`, `@vmap_u:param_Parameter`), whatever
    `u` is (a pure function, one reading a module-level Cell). The same transforms built at
    module level (`hess = ms.jacfwd(ms.grad(u))`, or `gu = ms.grad(u)` then
    `ms.jacfwd(gu)` in the graph) and a `def` that calls the gradient (`def gu(p): return
    ms.grad(u)(p)`) compile, and so does `ms.grad` of a function that takes a gradient.

    ## Example
    ```python
    @ms.jit
    def laplacian(p):
        return ops.trace(ms.jacfwd(ms.grad(u))(p))
    ```

    ## Use instead
    Build the nested transform at module level (or wrap the gradient in a `def`):
    ```python
    hessian = ms.jacfwd(ms.grad(u))

    @ms.jit
    def laplacian(p):
        return ops.trace(hessian(p))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a limit of MindSpore's Jacobian transforms, rejected at
      every level).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: written set `heldout30b`
      (`pinn_laplacian_jacfwd_hessian_diag`) and its probes `fix31b_j_*`, `fix31b_jac_*`:
      `jacfwd` / `jacrev` of `ms.grad(u)` (pure `u`, `u` reading a Cell, an extra argument,
      under `ms.vmap` or not, in `construct`, through a local), of `ms.value_and_grad(u)`,
      `ms.jacfwd(u)`, `ms.jacrev(u)` and `ms.vmap(u)` are rejected; the same built at module
      level, a `def` calling `ms.grad`, `ms.grad` of a gradient's sum, and `ms.vmap` of a
      function taking `ms.jacfwd(u)` compile.
    """

    nodes = (ast.Call,)
    # a function `ms.vmap` maps in compiled code is no graph scope of its own: such
    # functions are found once per module (`_vmapped`)
    graph_only = False
    words = ("jacfwd", "jacrev")
    calls = _JACOBIANS

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.args or not _is(node, _JACOBIANS, ctx):
            return ()
        func = ctx.function
        if ctx.scope is None and (func is None or id(func) not in _vmapped(ctx)):
            return ()  # Python code: not compiled here
        inner = node.args[0]
        if isinstance(inner, ast.Name) and func is not None:
            bound = analyzer(ctx).single_assignment(inner.id, func)
            inner = bound if bound is not None else inner
        if not (isinstance(inner, ast.Call) and inner.args and _is(inner, _TRANSFORMS, ctx)):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node.func)}` of `{ctx.segment(inner)}`, a function a transform builds in compiled code: MindSpore cannot evaluate it as the Jacobian's argument (Illegal AnfNode for evaluating ... param_Parameter); build the nested transform at module level (`hessian = ms.jacfwd(ms.grad(u))`) or wrap the gradient in a `def`",
            )
        ]


def _vmapped(ctx: Context) -> set[int]:
    """The functions `ms.vmap` maps in compiled code (ids), once per file."""
    key = "jacobian-of-transform:vmapped"
    hit: set[int] | None = ctx.cache.get(key)
    if hit is None:
        hit = set()
        for call, _applied, _caller in compiled_vmaps(ctx.tree, ctx):
            target = mapped_function(call, ctx.tree, ctx)
            if target is not None:
                hit.add(id(target[0]))
        ctx.cache[key] = hit
    return hit


def _is(call: ast.Call, names: frozenset[str], ctx: Context) -> bool:
    q = ctx.qualname(call.func) or ""
    return q.split(".")[0] == "mindspore" and q.rsplit(".", 1)[-1] in names
