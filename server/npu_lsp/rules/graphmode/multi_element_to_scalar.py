"""MS136: `int(t)`, `float(t)`, `bool(t)`, `t.item()`, `if t:` on a tensor with more than one element."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.ranks import DYN_RANK, Val, describe, is_tensor, multi_element, ranks

_CONVERSIONS = frozenset({"int", "float", "bool"})
_SCALAR = "Can not convert Tensor with more than one element to Scalar"
_BOOL = "Only tensor which shape is () or (1,) can be converted to bool"
_MIN_MAX = frozenset({"min", "max"})
_AMBIGUOUS = "The truth value of an array with more than one element is ambiguous."


@rule(code="MS136", name="multi-element-tensor-to-scalar", severity="error", family="graphmode")
class MultiElementTensorToScalar(GraphRule):
    """## What it does
    Flags `int(t)`, `float(t)`, `bool(t)`, `t.item()` and a tensor used as a condition (`if t:`,
    `while t:`, `a if t else b`) in compiled code when `t` has more than one element in the
    graph MindSpore compiles: shapes are followed from the tensors the program passes to the
    network or `@ms.jit` function (`net(Tensor(np.random.randn(2, 3), ms.float32))`,
    `ms.jit(net)(x)`), through helpers, methods and sub-cells (one compilation per call
    signature), `nn.Dense` / `nn.GRUCell` / `nn.RNNCell` sub-cells set once in `__init__`
    (`self.gate = nn.Dense(d, 1)` makes `self.gate(h)` of a `(1, d)` `h` a `(1, 1)` tensor),
    broadcasting, indexing and the ops of the table `ms_shapes.json`, `functools.partial` of a
    helper or an op (`functools.partial(scale, factor=2.0)(x)` compiles as `scale(x,
    factor=2.0)`), closures a module-level factory returns (`f = make_scaler(2.0)` then
    `f(x)`), lambdas (module-level or bound in the function: `f0 = lambda t: t * 2`),
    `ops.concat` / `ops.cat` / `ops.stack` of a display of tensors, `ops.topk` (values and
    indices: the last axis cut to `k`), the rows `ops.unstack` gives (a `for` over them or
    over a list display is unrolled), `getattr(self, f'head_{x.ndim - 2}')` layers, items of a list display
    stored and read at constant indices (`outs = [None, None]; outs[0] = x * 2`), loops over
    `range` (an int each pass, also of a bound known only at run time: `range(n)` of an
    `ms.mutable(2)`) and lists of numbers (a `for` over a list display a name holds is unrolled, its
    `if best is None or v > best:` decided on each pass), dicts of numbers, numbers a plain
    object or `@ms.jit_class` instance held on `self` sets in its `__init__` (`x *
    self.tracker.scale`, also of one object two sub-cells share), and `min` / `max` / `math` functions of
    numbers known while compiling (of a run-time scalar, such as `max(float(x[0, 0]), 0.5)`,
    they run by JIT Fallback under LAX: what they touch becomes a Python object whose
    `argmax()` runs as in PyNative, and nothing is said). Notably
    `t.argmax()` without an axis reduces only the last axis in a graph (a 2-D `t` gives a
    1-D result), unlike PyNative and PyTorch. A shape of `()` or `(1,)` converts; any other,
    even `(1, 1)`, does not. Builtin `min(a, b)` / `max(a, b)` of tensors only compares them
    as Python values, so it is flagged the same way when one has such a shape. Where a shape
    is not known, nothing is said.

    ## Why is this bad?
    MindSpore 2.10 stops at every syntax level: `int` / `float` with "Can not convert Tensor
    with more than one element to Scalar, while the data's shape is : (2)", `bool` and
    conditions with "Only tensor which shape is () or (1,) can be converted to bool" (or "The
    truth value of an array with more than one element is ambiguous"), `.item()` with "The
    tensor should have only one element", builtin `min` / `max` of tensors with "The truth
    value of an array with more than one element is ambiguous." (use `ops.minimum` /
    `ops.maximum`).

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            k = int(x.argmax())  # x is (2, 3): argmax() gives a (2,) tensor
            return x * k

    Net()(Tensor(np.random.randn(2, 3), ms.float32))
    ```

    ## Use instead
    Reduce to one element first (`x.argmax(None)`, `ops.argmax(x)`, `x.sum()`, `x[0, 0]`), or
    stay in tensor operations (`ops.where(t > 0, a, b)` instead of `if t > 0:`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level), measured on MindSpore 2.10 CPU.
    - `int_func` / `float_func` in mindspore/graph/_parse/standard_method.py (2.10): only a
      shape of length 0, or of length 1 with size 1, converts. Measured on MindSpore 2.10 CPU
      with the probes `rk_*` (tests/npu_lsp/fixtures/written/famc/probes).
    - `tensor_item` in mindspore/ops/composite/multitype_ops/_compile_utils.py (2.10): `.item()`
      takes only `()` and `(1,)`; a `(1, 1)` Dense output in a decoder loop: the written set
      `heldout18a` (`tts_tacotron_inference_stop_token_loop`) and its probes `fe18a_ti_*`.
    - Local lambdas, list items stored at constant indices and unrolled loops over a list of
      numbers keeping the best item: written/lax probes `genfresh32_rk_*` and fresh v5 seeds
      11900069, 11900076, 11900089, measured on MindSpore 2.10 CPU.
    - Shapes through `functools.partial`, joins, number loops and dicts, and constant
      `min` / `max` / `math` calls: probes `vl19_*` (tests/npu_lsp/fixtures/written/gen18/probes),
      measured on MindSpore 2.10 CPU (`max(float(x[0, 0]), 0.5)` compiles under LAX as JIT
      Fallback, and the tensor it scales then converts).
    - Builtin `min` / `max` of two tensors: written/heldout33c probes `fix33f_min_*`,
      `fix33f_max_*` (`(1, 1)` and `(4,)` rejected at both levels, `()` and `(1,)` compile).
    """

    nodes = (ast.Call, ast.If, ast.While, ast.IfExp)
    calls = frozenset({"int", "float", "bool", "item", "min", "max"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most conditions and conversions hold no multi-element
        # tensor, for the cost of a call rather than of a generator each
        func = ctx.function
        if func is None:
            return ()
        if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id in _MIN_MAX:
            return self._min_max(node, ctx, func)
        target, how = _converted(node, ctx)
        if target is None:
            return ()
        got = ranks(ctx).value_at(target, func)
        shapes = [v for v in got if multi_element(v)]
        if not shapes:
            if how in ("item", "int", "float") and DYN_RANK in (got or ranks(ctx).value_at(target, func, comprehension=True)):
                return [ctx.diagnostic(self, node, _unknown_rank(how))]
            return ()
        return self._report(node, ctx, target, how, shapes)

    def _min_max(self, node: ast.Call, ctx: Context, func: ast.AST) -> Iterable[Diagnostic]:
        """Builtin `min(a, b)` / `max(a, b)` of tensors only, one of them (in some call
        context) of a shape other than `()` / `(1,)`: MindSpore 2.10 stops at both levels with
        "The truth value of an array with more than one element is ambiguous." even for a
        `(1, 1)` tensor of one element (measured, written/heldout33c
        `sac_twin_critic_python_min_builtin`, probes `fix33f_min_*` / `fix33f_max_*`); of two
        `()` tensors it compiles (written/train probe `min_two_tensors_accepted`). Mixed with a
        Python number it is interpreted instead (fallback_calls.mixed_min_max)."""
        args = node.args
        if len(args) < 2 or node.keywords or any(type(a) is ast.Starred for a in args):
            return ()
        if ctx.qualname(node.func) != f"builtins.{node.func.id}":  # type: ignore[attr-defined]
            return ()
        values = [ranks(ctx).value_at(a, func) for a in args]
        if not all(v and all(is_tensor(x) for x in v) for v in values):
            return ()  # a number or an unknown value among them
        shapes = [x for v in values for x in v if multi_element(x)]
        if not shapes:
            return ()
        name = node.func.id  # type: ignore[attr-defined]
        other = "ops.minimum" if name == "min" else "ops.maximum"
        return [
            ctx.diagnostic(
                self,
                node,
                f"builtin `{name}` of tensors, one of shape {describe(shapes[0])}: in a graph it compares them as Python values and MindSpore stops: \"{_AMBIGUOUS}\" (even for a `(1, 1)` tensor); use `{other}(a, b)`",
            )
        ]

    def _report(
        self, node: ast.AST, ctx: Context, target: ast.expr, how: str, shapes: list[Val]
    ) -> Iterator[Diagnostic]:
        shape = describe(shapes[0])
        hint = ""
        if (
            isinstance(target, ast.Call)
            and isinstance(target.func, ast.Attribute)
            and target.func.attr == "argmax"
            and not target.args
            and not target.keywords
        ):
            hint = "; in a graph `t.argmax()` reduces the last axis only (`t.argmax(None)` or `ops.argmax(t)` reduce all)"
        if how == "condition":
            msg = f"a tensor of shape {shape} used as a condition: MindSpore: \"{_BOOL}\"{hint}"
        elif how == "bool":
            msg = f"`bool()` of a tensor of shape {shape}: MindSpore: \"{_BOOL}\"{hint}"
        elif how == "item":
            msg = f"`.item()` of a tensor of shape {shape}: MindSpore: \"The tensor should have only one element\"{hint}"
        else:
            msg = f"`{how}()` of a tensor of shape {shape}: MindSpore: \"{_SCALAR}\"{hint}"
        yield ctx.diagnostic(self, node if how != "condition" else target, msg)


def _unknown_rank(how: str) -> str:
    what = "`.item()`" if how == "item" else f"`{how}()`"
    return (
        f"{what} of a tensor whose rank MindSpore does not know while compiling: a tensor condition "
        "joins values of different ranks into it (MindSpore: \"The tensor should have only one element. "
        "But the shape of input tensor is None.\"); give both sides one rank, or reduce first (`.sum()`)"
    )


def _converted(node: ast.AST, ctx: Context) -> tuple[ast.expr | None, str]:
    """The expression `node` turns into a Python scalar, and how."""
    if type(node) is ast.If or type(node) is ast.While or type(node) is ast.IfExp:
        return node.test, "condition"
    assert isinstance(node, ast.Call)
    f = node.func
    if (
        isinstance(f, ast.Name)
        and f.id in _CONVERSIONS
        and len(node.args) == 1
        and not node.keywords
        and ctx.qualname(f) == f"builtins.{f.id}"
    ):
        return node.args[0], f.id
    if isinstance(f, ast.Attribute) and f.attr == "item" and not node.args and not node.keywords:
        return f.value, "item"
    return None, ""
