"""MS214: `ops.repeat_interleave` with repeats known only at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the qualified names of the function (`ops.repeat_interleave`, its defining module)
_FUNCTIONS = frozenset({"mindspore.ops.repeat_interleave"})


@rule(code="MS214", name="repeat-interleave-runtime-repeats", severity="error", family="graphmode")
class RepeatInterleaveRuntimeRepeats(GraphRule):
    """## What it does
    Flags `ops.repeat_interleave(x, repeats, axis)` and `x.repeat_interleave(repeats, axis)`
    in compiled code when `repeats` is known only at run time: a tensor the graph computes
    or is given (`durations[b]`, a `Parameter`), or a number read from one (`int(d[0])`,
    `t.item()`). An int, a tuple of ints, a shape and a tensor of constants are fine.

    ## Why is this bad?
    MindSpore 2.10 turns a tensor `repeats` into a Python tuple with its `TensorToList`
    primitive and unrolls one `Tile` per element (`mindspore/ops/function/array_func.py`,
    `repeat_interleave`). On constants that is done while compiling; on a run-time tensor
    the primitive stays in the graph, and the CPU backend has no kernel for it: the run
    stops with `RuntimeError: Kernel select failed: Unsupported op [TensorToList] on CPU`, at
    every syntax level. A number read from a tensor fails earlier (`For 'Tensor', the type of
    'input_data' should be one of [...], but got type 'Float'`).

    ## Example
    ```python
    class LengthRegulator(nn.Cell):
        def construct(self, x, durations):
            return ops.repeat_interleave(x, durations, 0)
    ```

    ## Use instead
    Build the index of every output frame with tensor ops and gather it:
    ```python
    class LengthRegulator(nn.Cell):
        def construct(self, x, durations):
            ends = ops.cumsum(durations, 0)
            frame = ops.arange(int(self.max_frames))
            idx = (frame.reshape(-1, 1) >= ends.reshape(1, -1)).astype(ms.int32).sum(1)
            return ops.gather(x, ops.minimum(idx, x.shape[0] - 1), 0)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (values known only at run time cannot drive graph structure).
    - Measured on MindSpore 2.10 CPU: written/heldout16b probes `ls17_ri_*` (a tensor input,
      its method form, a row `d[0]` and `int(d[0])` rejected at LAX and STRICT; an int, a
      tuple and `Tensor(np.array([...]))` compile) and cases `tts_length_regulator_repeat_loop`,
      `tts_duration_rounding_total_frames`; written/heldout21a probes `lb23_ri_*` (a
      `Parameter`, a computed tensor, a slice of an input, an `@ms.jit` argument rejected;
      a shape, an int on `self`, a tuple compile).
    """

    nodes = (ast.Call,)
    calls = frozenset({"repeat_interleave"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if type(f) is ast.Attribute:
            if f.attr != "repeat_interleave":
                return ()
            q = ctx.qualname(f)
            if q in _FUNCTIONS:
                at = 1
            elif q is None and analyzer(ctx).kind(f.value) == Kind.TENSOR:
                at = 0  # `x.repeat_interleave(repeats, axis)`
            else:
                return ()
        elif type(f) is ast.Name and f.id == "repeat_interleave" and ctx.qualname(f) in _FUNCTIONS:
            at = 1
        else:
            return ()
        repeats = node.args[at] if len(node.args) > at else next((k.value for k in node.keywords if k.arg == "repeats"), None)
        if repeats is None or isinstance(repeats, ast.Starred) or not analyzer(ctx).kind(repeats).dynamic:
            return ()
        if _constant_repeats(repeats, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`repeat_interleave` is given `{ctx.segment(repeats)}` as repeats, known only at run time: MindSpore turns a tensor of repeats into a tuple with `TensorToList`, which the CPU backend cannot run (\"Kernel select failed: Unsupported op [TensorToList] on CPU\"); give an int or a tuple of ints, or gather frame indices built with tensor ops",
            )
        ]


def _constant_repeats(e: ast.expr, ctx: Context) -> bool:
    """`Tensor(np.array([2, 1, 3]))` in place, a local bound once to one, or `self.rep` bound
    only to one in `__init__` (not a `Parameter`): MindSpore folds `TensorToList` of it while
    compiling (written/heldout16b probe `ls17_ri_const_tensor`, heldout21a
    `lb23_ri_self_const_tensor_ok`)."""
    if constant_tensor(e, ctx) is not None:
        return True
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self" and ctx.function is not None:
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        return bool(values) and all(v is not None and constant_tensor(v, ctx) is not None for v in values)
    return False
