"""MS161: (STRICT) a Tensor method MindSpore's graph compiler does not have under STRICT."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: reported by MS130 (tensor-to-host) with its own advice
_HOST_METHODS = frozenset({"asnumpy", "numpy", "tolist"})


@functools.cache
def refused_under_strict() -> frozenset[str]:
    """Tensor methods MindSpore 2.10 refuses under STRICT, from `ms_tensor_strict.json`
    (written by tests/npu_lsp/difftest/probe_tensor_methods.py from MindSpore itself)."""
    text = resources.files(__package__).joinpath("ms_tensor_strict.json").read_text("utf-8")
    return frozenset(json.loads(text)["refused_under_strict"]) - _HOST_METHODS


@rule(code="MS161", name="tensor-method-under-strict", severity="error", family="graphmode")
class TensorMethodUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags calls of Tensor methods that MindSpore 2.10's graph
    compiler does not implement, on a tensor of compiled code: `x.is_contiguous()`,
    `x.stride()`, `x.storage_offset()`, `x.data_ptr()`, `x.svd()`, `x.requires_grad_()`,
    `x.set_dtype(...)` and the other names of its measured table (`ms_tensor_strict.json`,
    one compiled probe per public Tensor method). `asnumpy`, `numpy` and `tolist` are MS130's.

    ## Why is this bad?
    Under STRICT the graph has no Python object to fall back to: MindSpore stops with
    `AttributeError: In JIT strict mode, cannot get attributes is_contiguous or the
    Tensor[Float32] object has no attribute: 'is_contiguous'`. The default LAX level runs
    the method through JIT Fallback.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def step(x):
        if not x.is_contiguous():
            x = x.contiguous()
        return x * 2
    ```

    ## Use instead
    ```python
    @ms.jit(fullgraph=True)
    def step(x):
        return x.contiguous() * 2
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT); MindSpore 2.10, measured by
      tests/npu_lsp/difftest/probe_tensor_methods.py and the `spec` probes
      (tests/npu_lsp/fixtures/written/spec).
    """

    nodes = (ast.Call,)
    strict_only = True
    calls = refused_under_strict()

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not ctx.scope or not ctx.scope.strict:
            return
        f = node.func
        if not isinstance(f, ast.Attribute) or f.attr not in self.calls:
            return
        if analyzer(ctx).kind(f.value) != Kind.TENSOR:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`Tensor.{f.attr}()` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes {f.attr})",
        )
