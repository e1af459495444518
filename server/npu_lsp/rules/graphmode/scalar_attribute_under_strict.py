"""MS166: (STRICT) an attribute or method of a Python int or float in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.helpers import GraphRule

#: the public attributes of int and float (`dir(int) | dir(float)` without dunders)
_SCALAR_ATTRIBUTES = frozenset(
    {"as_integer_ratio", "bit_count", "bit_length", "conjugate", "denominator", "from_bytes", "fromhex",
     "hex", "imag", "is_integer", "numerator", "real", "to_bytes"}
)
#: MindSpore's name of the scalar's type in its message
_MS_TYPE = {"int": "Int64", "float": "Float32"}


@rule(code="MS166", name="scalar-attribute-under-strict", severity="error", family="graphmode")
class ScalarAttributeUnderStrict(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags an attribute or method of a Python int or float in
    compiled code (`n.bit_length()`, `r.is_integer()`, `n.real`, `(0.5).as_integer_ratio()`),
    the number being a literal, a constant kept on `self`, a shape entry, `len(...)`, an int
    argument of a jit function, or arithmetic of those.

    ## Why is this bad?
    Under STRICT a number of the graph is a scalar with no Python attributes: MindSpore 2.10
    stops with `AttributeError: In JIT strict mode, cannot get attributes bit_length or the
    Int64 object has no attribute: 'bit_length'` (every public attribute of int and float was
    measured refused, on literals, names, `self` constants, shape entries and arguments). The
    default LAX level runs the attribute through JIT Fallback. Attributes of a tensor
    (`x.sum().real`) are Tensor methods and not this rule's.

    ## Example
    ```python
    @ms.jit(fullgraph=True)
    def f(x):
        n = x.shape[0]
        return x * n.bit_length()
    ```

    ## Use instead
    Compute it outside compiled code (in `__init__`, or before the call), or with
    arithmetic the graph has:
    ```python
    @ms.jit(fullgraph=True)
    def f(x, width):
        return x * width
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT); written set `langref` (cases
      `int_method__*`, `float_method__is_integer`) and its probes `scalar_*`.
    """

    nodes = (ast.Attribute,)
    strict_only = True
    words = tuple(f".{name}" for name in sorted(_SCALAR_ATTRIBUTES))

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Attribute)
        if node.attr not in _SCALAR_ATTRIBUTES or not ctx.scope or not ctx.scope.strict:
            return
        if isinstance(node.ctx, ast.Store):
            return
        v = values(ctx).of(node.value, ctx.function)
        if not isinstance(v, av.Scalar) or v.py not in _MS_TYPE:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`.{node.attr}` of the {v.py} `{ctx.segment(node.value)}` is not available under the STRICT syntax level (MindSpore: In JIT strict mode, cannot get attributes {node.attr} or the {_MS_TYPE[v.py]} object has no attribute: '{node.attr}')",
        )
