"""MS167: (STRICT) `str.format` of a tensor, and f-strings holding a tensor and a tuple."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS167", name="string-format-of-tensor", severity="error", family="graphmode")
class StringFormatOfTensor(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `"...".format(...)` given a tensor or a run-time
    scalar read from one (`float(loss)`, `loss.item()`), and f-strings
    whose replacement fields hold both a tensor (or such a scalar) and a tuple
    (`f"{y.shape} {y.max()}"`, `f"m={float(y.mean()):.3f} shape={y.shape}"`).
    A `.format` with a field `str(v)` / `repr(v)` of a graph variable is left to MS130 / MS131:
    STRICT stops at that call, before the format.

    ## Why is this bad?
    STRICT graphs build such strings with a string-formatting operator that has no kernel
    for these inputs: MindSpore 2.10 stops with `Kernel select failed` for
    `"max={}".format(y.max())`, and with `Tuple to TupleUnfold pattern should have
    TupleGetItem as user node, but got ... JoinedStr` for an f-string mixing `y.shape` and a
    tensor. An f-string of a tensor alone, or of a shape alone, and `.format` of constants
    compile; the default LAX level accepts all of them.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        y = x * 2
        print(f"shape={y.shape} max={y.max()}")
        return y
    ```

    ## Use instead
    Print the parts separately (or the tensor alone):
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        y = x * 2
        print("shape=", y.shape, "max=", y.max())
        return y
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only); measured on MindSpore 2.10 with the probes of the
      `python` written set (tests/npu_lsp/fixtures/written/python/README.md); `.format` of
      `float(loss)` with the written set `pyfeat` (`format_loss_value_two_decimals`) and the
      probes `lax` (`ex_k`); a run-time scalar beside a tuple in an f-string with the
      written heldout16b probes `fe_fs_*` (`float(t)` alone, or beside `x.shape[0]`,
      compiles).
    """

    nodes = (ast.Call, ast.JoinedStr)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.scope or not ctx.scope.strict:
            return
        a = analyzer(ctx)
        if isinstance(node, ast.Call):
            f = node.func
            if not (isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant) and isinstance(f.value.value, str)):
                return
            fields = [*node.args, *(k.value for k in node.keywords)]
            if any(_string_call(arg, ctx) and a.kind(arg).dynamic for arg in fields):
                # `str(t)` / `repr(t)` of a graph variable stops STRICT in the front end
                # ("cannot get attributes __str__", written/zoo14 `str_of_tensor_input_in_format`),
                # so the format is never reached: MS130 / MS131 report that call
                return
            for arg in fields:
                kind = a.kind(arg)
                if kind.dynamic and constant_tensor(arg, ctx) is None:
                    # a run-time scalar read from a tensor (`float(loss)`, `t.item()`) goes
                    # through the same Format operator (measured on 2.10: `"loss={:.4f}"
                    # .format(float(loss))` fails under STRICT, "Unsupported op [Format] on CPU")
                    what = "tensor" if kind == Kind.TENSOR else "run-time scalar"
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"under STRICT, `str.format` of the {what} `{ctx.segment(arg)}` fails to compile (MindSpore: Kernel select failed); print the tensor as its own argument",
                    )
                    return
            return
        assert isinstance(node, ast.JoinedStr)
        fields = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
        # tensors built from constants are folded into the string (MindSpore's
        # test_graph_joinedstr `..._inner_tensor`, test_str_format `..._constant_tensor_input`
        # compile under STRICT; written/mstests probes `p167_*`)
        # a run-time scalar read from a tensor (`float(t.mean())`) joins a tuple the same way
        # (written/heldout16b `prep_batch_stats_fstring_print`, probes `fe_fs_*`)
        tensor = next((e for e in fields if a.kind(e).dynamic and constant_tensor(e, ctx) is None), None)
        tup = next((e for e in fields if _is_tuple(e, a)), None)
        if tensor is not None and tup is not None:
            what = "tensor" if a.kind(tensor) == Kind.TENSOR else "run-time scalar"
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT, an f-string holding the {what} `{ctx.segment(tensor)}` and the tuple `{ctx.segment(tup)}` fails to compile (MindSpore: Tuple to TupleUnfold pattern ... JoinedStr); format them in separate strings",
            )


def _string_call(e: ast.expr, ctx: Context) -> bool:
    """`str(...)` or `repr(...)` (the builtins)."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and ctx.qualname(e.func) in ("builtins.str", "builtins.repr")
    )


def _is_tuple(e: ast.expr, a: Analyzer) -> bool:
    """A tuple value: a shape (`y.shape`), a tuple literal or a name holding a tuple."""
    if isinstance(e, ast.Attribute) and e.attr == "shape":
        return True
    if isinstance(e, ast.Tuple):
        return True
    return isinstance(e, ast.Name) and a.type_class(e) == "tuple"
