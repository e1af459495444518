"""MS130: (STRICT) moving a tensor to the host inside compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import AUGMENTED, FOLDED_OPS, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.tensor_names import TENSOR_MAKERS


@rule(code="MS130", name="tensor-to-host", severity="error", family="graphmode")
class TensorToHost(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags `t.asnumpy()`, `t.numpy()`, `t.tolist()`, `str(t)` and `repr(t)` on tensors
    inside compiled code (including methods of custom classes that `construct` calls), also
    on the variable of a `for` or a comprehension over a local list grown only with tensors
    (`for h in hist[::-1]: h.tolist()`; for `asnumpy()`, grown with any graph value, also
    an item `fisher[0]` and a tensor method's result on one: `[f.mean().asnumpy() for f in
    fisher]`), and on a module-level tensor an `@ms.jit` function reads (`W.asnumpy()` with
    `W = Tensor(...)`: a constant to MindSpore, whose STRICT graph still refuses it).

    ## Why is this bad?
    STRICT compiles everything into the graph and has no host objects: MindSpore stops with
    `AttributeError: In JIT strict mode, cannot get attributes asnumpy ...`. The default LAX
    level accepts the call through JIT Fallback, at the price of a device-to-host copy and a
    graph break at run time.

    ## Example
    ```python
    ms.set_context(jit_syntax_level=ms.STRICT)

    class Net(nn.Cell):
        def construct(self, x):
            return Tensor(x.asnumpy() + 1)
    ```

    ## Use instead
    Stay in tensor operations:
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return x + 1
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only): `t.asnumpy()`, `t.tolist()`, `str(t)` on tensors.
    - Measured on MindSpore 2.10 (CPU): written set `heldout40a`
      (`ewc_fisher_diag_estimate_numpy_mean_in_construct`) and its probes
      `fix40c_asnumpy_appended_*`: `asnumpy()` on items of a list grown with `g ** 2` in
      `construct` fails under STRICT in a comprehension, a `for` and by index.
    """

    nodes = (ast.Call,)
    strict_only = True
    calls = frozenset({"asnumpy", "numpy", "tolist", "str", "repr"})

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if not ctx.scope or not ctx.scope.strict:
            return
        f = node.func
        a = analyzer(ctx)
        if isinstance(f, ast.Attribute) and f.attr == "asnumpy" and not node.args:
            if (
                a.kind(f.value) != Kind.CONST
                or isinstance(f.value, ast.Attribute)
                or _appended_tensor_item(f.value, ctx)
                or module_tensor(f.value, ctx)
            ):
                yield ctx.diagnostic(
                    self, node, "`asnumpy()` is not available under the STRICT syntax level"
                )
        elif isinstance(f, ast.Attribute) and f.attr in ("tolist", "numpy") and not node.args:
            # measured: `x.numpy()` (Tensor.numpy, the PyTorch spelling) fails under STRICT
            # exactly as `asnumpy()` does ("cannot get attributes numpy")
            if a.kind(f.value) == Kind.TENSOR or _loop_over_appended_tensors(f.value, ctx) or module_tensor(f.value, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{f.attr}()` on a tensor is not available under the STRICT syntax level",
                )
        elif isinstance(f, ast.Name) and string_of_tensor(node, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"`{f.id}()` of a tensor is not available under the STRICT syntax level (MindSpore: "
                f"{_STRING_ERROR[f.id]}); format it outside compiled code, or print it (`print(\"x\", x)`)",
            )


def module_tensor(e: ast.expr, ctx: Context, func: ast.AST | None = None) -> bool:
    """Is `e` a module-level name (not bound in the function) bound to a tensor
    (`W = Tensor(np.ones((2, 3)))`, `ops.ones(...)`)? The flow model holds it as a constant;
    it is a constant Tensor to MindSpore too, and STRICT refuses its host methods as any
    tensor's (measured, written/heldout41c probe `fix42a_an_jit_global_dense_clean`: "In
    JIT strict mode, cannot get attributes asnumpy or the Tensor[Float32] object"; LAX
    compiles it)."""
    func = func if func is not None else ctx.function
    if type(e) is not ast.Name or func is None or analyzer(ctx).bindings_of(e.id, func):
        return False
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments) and any(a.arg == e.id for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return False
    value = constructed.built(e, None, ctx)
    if type(value) is not ast.Call:
        return False
    q = ctx.qualname(value.func) or ""
    module, _, last = q.rpartition(".")
    return q in TENSOR_MAKERS or (module == "mindspore.ops" and last in FOLDED_OPS)


_MUTATORS = frozenset({"extend", "insert", "__setitem__", "__iadd__"})
#: tensor methods whose result is a tensor again (`f.mean().asnumpy()`)
_TENSOR_RESULTS = frozenset({"mean", "sum", "max", "min", "abs", "sqrt", "exp", "log", "norm", "float", "flatten", "reshape", "squeeze"})


def _appended_tensor_item(e: ast.expr, ctx: Context) -> bool:
    """Is `e` an item of a local list grown only with tensors, or a tensor method's result on
    one (`[f.mean().asnumpy() for f in fisher]` after `fisher.append(g ** 2)`, `fisher[0]`)?
    The flow model folds such items to constants; MindSpore's STRICT graph holds tensors
    there and refuses `asnumpy()` ("cannot get attributes asnumpy"; measured, written/heldout40a
    `ewc_fisher_diag_estimate_numpy_mean_in_construct`, probes `fix40c_asnumpy_appended_*`)."""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _TENSOR_RESULTS:
        e = e.func.value
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) and not isinstance(e.slice, ast.Slice):
        return _grown_with_tensors(e.value.id, ctx, Kind.UNKNOWN)
    return _loop_over_appended_tensors(e, ctx, Kind.UNKNOWN)


def _loop_over_appended_tensors(e: ast.expr, ctx: Context, least: Kind = Kind.TENSOR) -> bool:
    """Is `e` the variable of a `for` over a local list that the function grows only with
    tensors (`hist = []`, `hist.append(idx)`, then `for h in hist[::-1]: h.tolist()`)? The flow
    model leaves such an item's kind open; MindSpore's STRICT graph holds tensors there and
    refuses `tolist()` on them ("cannot get attributes asnumpy"; measured, written/heldout28b
    case `r2_rnn_viterbi_tolist_backtrack`, probes `fix28c_tl_*`)."""
    func = ctx.function
    if not isinstance(e, ast.Name) or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = analyzer(ctx)
    it = _comprehension_iter(e, ctx) or a.iterated(e.id, func)
    while it is not None:
        if isinstance(it, ast.Subscript) and isinstance(it.slice, ast.Slice):
            it = it.value
        elif isinstance(it, ast.Call) and len(it.args) == 1 and not it.keywords and ctx.qualname(it.func) in (
            "builtins.reversed",
            "builtins.list",
            "builtins.tuple",
        ):
            it = it.args[0]
        else:
            break
    return isinstance(it, ast.Name) and _grown_with_tensors(it.id, ctx, least)


def _comprehension_iter(e: ast.Name, ctx: Context) -> ast.expr | None:
    """What the comprehension around `e` iterates when `e` is its (plain) variable."""
    node: ast.AST | None = ctx.parent(e)
    while node is not None and not isinstance(node, (ast.stmt, ast.Lambda)):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in node.generators:
                if isinstance(gen.target, ast.Name) and gen.target.id == e.id:
                    return gen.iter
        node = ctx.parent(node)
    return None


def _grown_with_tensors(name: str, ctx: Context, least: Kind) -> bool:
    """Is `name` a local `[]` the function grows only by `append`s of values of kind `least`
    or more (`Kind.TENSOR`: tensors; `Kind.UNKNOWN`: anything not a constant, for `asnumpy()`,
    which STRICT refuses on any graph value)?"""
    func = ctx.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = analyzer(ctx)
    built = a.single_assignment(name, func)
    if not isinstance(built, ast.List) or built.elts:
        return False
    appended: list[ast.expr] = []
    for c in a.changes(name, func):
        if c.how == AUGMENTED or c.how in _MUTATORS:
            return False
        if c.how == "append" and len(c.args) == 1:
            appended.append(c.args[0])
    return bool(appended) and all(a.kind(v, func) >= least for v in appended)


#: what MindSpore 2.10 says at STRICT (written/zoo14 `str_of_tensor_input_in_format`, `repr_of_tensor`)
_STRING_ERROR = {"str": "cannot get attributes __str__", "repr": "the inputs of script 'repr(x)' should be constant"}


def string_of_tensor(node: ast.Call, ctx: Context) -> bool:
    """`str(t)` / `repr(t)` of a run-time tensor: MS130 reports it (MS131, which flags `str` and
    `repr` of any graph variable, leaves this case here, so one call gets one error)."""
    f = node.func
    return (
        isinstance(f, ast.Name)
        and f.id in ("str", "repr")
        and ctx.qualname(f) == f"builtins.{f.id}"
        and bool(node.args)
        and analyzer(ctx).kind(node.args[0]) == Kind.TENSOR
        # a tensor built from constants is folded (MindSpore's test_str
        # `..._with_input_tensor_2`: `str(Tensor([10]))` compiles under STRICT; probes `p130_*`)
        and constant_tensor(node.args[0], ctx) is None
    )
