"""MS257: `mint.nn.functional.dropout` of a tensor whose shape is known only at run time, on the CPU."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.dynamic_shape import dynamic_shape
from npu_lsp.rules.graphmode.helpers import GraphRule, runs_on_cpu
from npu_lsp.rules.graphmode.list_grown_in_tensor_loop import iterated_declared_dynamic

#: the spellings of MindSpore 2.10's `dropout_ext` (`mint.nn.functional.dropout` is it)
_DROPOUT_EXT = frozenset({"mindspore.mint.nn.functional.dropout", "mindspore.ops.function.nn_func.dropout_ext"})


@rule(code="MS257", name="dropout-ext-dynamic-shape-cpu", severity="error", family="graphmode")
class DropoutExtDynamicShapeCpu(GraphRule):
    """## What it does
    Flags `mint.nn.functional.dropout(t, ...)` in compiled code, in a script that runs on the
    CPU (`ms.set_device("CPU")`, `ms.set_context(device_target="CPU")`), when `t` has a
    shape known only at run time: a `construct` input `net.set_inputs(...)` declares with
    a `None` dimension (any dimension), a tensor computed from one that keeps it, or the
    result of a dynamic-shape operation (`ops.masked_select`, `ops.unique`, ...). Whatever
    `training` is: `training=False` and `training=self.training` of a network in
    inference fail alike.

    ## Why is this bad?
    `mint.nn.functional.dropout` is MindSpore's `DropoutExt` primitive, whatever `training`
    says. With static shapes the graph compiler drops it when `training` is False, so the
    network compiles; with a dynamic shape the primitive stays in the graph and the CPU
    backend has no kernel for it: compiling stops with `Kernel select failed: Unsupported
    op [DropoutExt] on CPU`, at every syntax level. (With `training=True` there is no CPU
    kernel at all, in PyNative too.)

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return mint.nn.functional.dropout(x, p=0.1, training=self.training)

    net = Net()
    net.set_inputs(Tensor(shape=[None, 3], dtype=mstype.float32))
    ```

    ## Use instead
    Hold a dropout layer (`self.drop = mint.nn.Dropout(p=0.1)` or `nn.Dropout(p=0.1)`,
    which return their input when not training), use `ops.dropout`, or declare the shape
    in `set_inputs`.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a CPU backend kernel, not a syntax rule).
    - Measured on MindSpore 2.10 (CPU), LAX and STRICT: difftest v6 seed 12001448, written/lax
      probes `genfresh39_do_*`: rejected under `set_inputs([None, 3])`, `[2, None]`, of a
      tensor computed from the input, of `ops.unique` / `ops.masked_select` results, with
      `training=False`, `training=self.training`, positional arguments; compiles with static
      shapes (also a masked_select's sum broadcast back to a fixed shape, and in an
      `@ms.jit` function), and `mint.nn.Dropout`, `nn.Dropout`, `ops.dropout` compile under
      `set_inputs`.
    """

    nodes = (ast.Call,)
    calls = frozenset({"dropout", "dropout_ext"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not node.args or isinstance(node.args[0], ast.Starred) or ctx.function is None:
            return ()
        if ctx.qualname(node.func) not in _DROPOUT_EXT or not runs_on_cpu(ctx):
            return ()
        t = node.args[0]
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "enumerate":
            return ()  # (`iterated_declared_dynamic` reads through `enumerate`; dropout takes a tensor)
        if not (dynamic_shape(t, ctx) or iterated_declared_dynamic(t, ctx)):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(t)}` has a shape known only at run time, and `{ctx.segment(node.func)}` is the `DropoutExt` primitive even when not training: with a dynamic shape the graph keeps it, and the CPU backend has no kernel for it (\"Kernel select failed: Unsupported op [DropoutExt] on CPU\"); hold `mint.nn.Dropout(p)` / `nn.Dropout(p)`, or use `ops.dropout`",
            )
        ]

