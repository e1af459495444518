"""MS251: a numpy-scalar attribute (`.astype`, `.item()`, `.dtype`) of a numpy function of
constants in compiled code, which MindSpore has turned into a plain number."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: attributes a numpy scalar has and a Python number lacks, each measured refused on such a
#: result in compiled code (written/heldout34c probes `fix34f_np_*`)
_NUMPY_ONLY = frozenset({"astype", "dtype", "item"})


@rule(code="MS251", name="numpy-scalar-method-in-graph", severity="error", family="graphmode")
class NumpyScalarMethodInGraph(GraphRule):
    """## What it does
    Flags `.astype(...)`, `.item()` and `.dtype` in compiled code on the result of a numpy
    function that gives a numpy scalar (a ufunc of numbers, `np.ceil(np.log(L))`,
    `np.sqrt(D)`, or a whole-array reduction, `np.sum([1.0, 2.0])`) computed from constants
    (a shape entry, a module-level number, a literal), directly or through a name bound
    once to it: Informer's ProbAttention `np.ceil(np.log(L_K)).astype("int").item()` in
    `construct`.

    ## Why is this bad?
    MindSpore runs a numpy call on constants while compiling and keeps its result as a
    graph number (a `Float` / `Int` scalar), not as a numpy scalar: it has no numpy
    attributes. MindSpore 2.10 stops at LAX and STRICT with `AttributeError: 'Float' object
    has no attribute 'astype'` (likewise `'item'`, `'dtype'`). `int(...)` / `float(...)` of
    the result compile, and so does the same code in `__init__`, which runs as Python.

    ## Example
    ```python
    def construct(self, q):
        L = q.shape[2]
        u = self.factor * np.ceil(np.log(L)).astype("int").item()
        return q[:, :, :u]
    ```

    ## Use instead
    ```python
    def construct(self, q):
        L = q.shape[2]
        u = self.factor * int(np.ceil(np.log(L)))
        return q[:, :, :u]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 0 (what gets compiled: Python calls on constants run while compiling).
    - Measured on MindSpore 2.10 CPU (written/heldout34c case
      `informer_prob_attention_randint_sample_k`, probes `fix34f_np_*`): `.astype("int")`,
      `.item()`, `.dtype` of `np.ceil(np.log(L))` / `np.log(L)` with `L = x.shape[1]`, of
      `np.sqrt(N)` with a module-level `N`, of `np.sum([1.0, 2.0])` are refused at both
      levels ("'Float' object has no attribute ..."); `int(np.ceil(np.log(L)))` and the
      same call in `__init__` compile; `.is_integer()` (a Python float's method) compiles
      under LAX and is MS166's under STRICT.
    - A ufunc of a `numpy.random` call given a size is an array, not a scalar (written/heldout41c
      case `hifigan_mel_dict_cache_by_device`, probes `fix41c_np_*`):
      `np.abs(np.random.randn(4, 3)).astype(np.float32)` and `np.exp(np.random.uniform(0, 1,
      size=(4, 3))).astype(...)` compile at both levels; without a size
      (`np.abs(np.random.randn()).astype(...)`, `np.sqrt(np.random.randint(1, 5)).item()`) they
      are refused like any other scalar.
    """

    nodes = (ast.Attribute,)
    words = (".astype", ".item", ".dtype")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most attributes stop at the first test
        assert isinstance(node, ast.Attribute)
        if node.attr not in _NUMPY_ONLY or not isinstance(node.ctx, ast.Load) or ctx.function is None:
            return ()
        value = node.value
        if type(value) is ast.Name:
            bound = analyzer(ctx).single_assignment(value.id, ctx.function)
            if type(bound) is not ast.Call:
                return ()
            value = bound
        elif type(value) is not ast.Call:
            return ()
        if not _constant_numpy_scalar(value, ctx):
            return ()
        return [
            ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(node.value)}` is a numpy scalar of constants, which MindSpore computes while compiling and keeps as a plain number: it has no `.{node.attr}` (MindSpore: 'Float' object has no attribute '{node.attr}'); use `int(...)` / `float(...)`, or compute it in `__init__`",
            )
        ]


def _constant_numpy_scalar(call: ast.Call, ctx: Context) -> bool:
    """Is `call` a numpy function giving a numpy scalar whose arguments are all constants of
    the graph (so MindSpore runs it while compiling)?"""
    a = analyzer(ctx)
    if not a.numpy_scalar_call(call, ctx.function):
        return False
    return all(a.kind(arg, ctx.function) == Kind.CONST for arg in (*call.args, *(k.value for k in call.keywords)))
