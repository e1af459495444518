"""MS159: torch's two-axis `x.transpose(dim0, dim1)` on a tensor that is not 2-D."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.entries import entry_callers
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, module_value_once
from npu_lsp.rules.graphmode.ranks import ranks
from npu_lsp.rules.graphmode.tensor_names import TENSOR_CLASS

_RESHAPES = frozenset({"view", "reshape"})


@rule(code="MS159", name="torch-style-transpose", severity="error", family="graphmode")
class TorchStyleTranspose(GraphRule):
    """## What it does
    Flags `x.transpose(a, b)` with two integer axes in compiled code, PyTorch's "swap two
    dimensions", when `x` is a tensor that is not 2-D (its rank read from `B, N, C = x.shape`,
    from the `view` / `reshape` that made it, or, for an input of a network or jit function
    called at module level, from the tensor every call passes: `Tensor(np.random.randn(2, 3,
    4))`, also through a module-level helper every call of which passes such an input:
    `attention(q, k)` from `construct`), or when an axis is outside a 2-D tensor's range (`x.transpose(1, 2)`).

    ## Why is this bad?
    In a MindSpore graph `Tensor.transpose(*axes)` takes the whole permutation, as numpy's
    does: two axes on a 3-D or 4-D tensor stop the compile at every syntax level with
    `ValueError: For Tensor.transpose, the number of axes must be equal to the dimension of
    Tensor, but got 2 in the number of axes.` PyNative accepts PyTorch's meaning, so ported
    code runs eagerly and fails only once compiled. On a 2-D tensor `x.transpose(-2, -1)` is
    the identity permutation, not a swap (a matrix product it feeds then fails on a
    non-square tensor: MS223).

    ## Example
    ```python
    class Attention(nn.Cell):
        def construct(self, x):
            B, N, C = x.shape
            q = x.view(B, N, 4, C // 4).transpose(1, 2)
            return q
    ```

    ## Use instead
    ```python
    class Attention(nn.Cell):
        def construct(self, x):
            B, N, C = x.shape
            q = x.view(B, N, 4, C // 4).swapaxes(1, 2)  # or .transpose(0, 2, 1, 3)
            return q
    ```
    `ops.swapaxes(x, 1, 2)` and `mint.transpose(x, 1, 2)` keep PyTorch's meaning.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 with the
      written set `ported` (`mint_functional_softmax_dropout`) and probes: `k.transpose(-2,
      -1)` on a 3-D input, `transpose(1, 2)` in a jit function and after `view(B, N, H, D)`
      are rejected at both levels; `transpose(0, 2, 1)`, `ops.transpose(x, (0, 2, 1))`,
      `mint.transpose(x, 1, 2)` and `swapaxes(1, 2)` compile.
    """

    nodes = (ast.Call,)
    calls = frozenset({"transpose"})  # `<x>.transpose(a, b)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "transpose") or node.keywords:
            return
        if len(node.args) != 2:
            return
        axes = [_int(a) for a in node.args]
        if any(a is None for a in axes):
            return
        recv = f.value
        if isinstance(recv, ast.Name) and recv.id == "self":
            return
        rank = _rank(recv, ctx)
        if rank is None:
            rank = _model_rank(recv, ctx)
        out_of_2d = any(a is not None and not -2 <= a <= 1 for a in axes)
        if rank is None:
            if not out_of_2d or analyzer(ctx).kind(recv) != Kind.TENSOR:
                return
        elif rank == 2 and not out_of_2d:
            return
        shown = f"{rank}-D " if rank is not None else ""
        yield ctx.diagnostic(
            self,
            node,
            f"`Tensor.transpose` in a graph takes the whole permutation (numpy's meaning), not two axes to swap: on a {shown}tensor this fails with 'the number of axes must be equal to the dimension of Tensor'; use `swapaxes({ctx.segment(node.args[0])}, {ctx.segment(node.args[1])})`",
        )


def _model_rank(recv: ast.expr, ctx: Context) -> int | None:
    """The rank the shape model (ranks.py) gives `recv` in every call context, when it is 3 or
    more: `self.k(x)` of an `nn.Dense` / `mint.nn.Linear` fed a 3-D input (heldout31b
    `r2_transpose_neg_dims_3d_scores`, `mint_causal_mask_triu_masked_fill`: rejected at both
    levels). A shape of the model is a lower bound of the graph's (an unknown operand may
    broadcast wider), so a rank below 3 says nothing for sure about a 2-D tensor."""
    func = ctx.function
    if func is None:
        return None
    seen = ranks(ctx).value_at(recv, func)
    got = {len(v) for v in seen if isinstance(v, tuple)}
    if len(got) != 1 or not all(isinstance(v, tuple) for v in seen):
        return None
    rank = got.pop()
    return rank if rank >= 3 else None


def _int(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _int(e.operand)
        return -inner if inner is not None else None
    return None


def _rank(e: ast.expr, ctx: Context) -> int | None:
    """The rank of `e` when the function says it: `e` is `x.view(a, b, c)` / `x.reshape(...)`,
    a name bound once to such a call, or a name unpacked as `B, N, C = name.shape` (and not
    rebound)."""
    direct = _reshape_rank(e)
    if direct is not None:
        return direct
    func = ctx.function
    if not isinstance(e, ast.Name) or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    bindings: list[ast.expr | None] = []
    unpacked: set[int] = set()
    args = func.args
    if any(a.arg == e.id for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        bindings.append(None)
    for n in ast.walk(func):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == e.id:
                    bindings.append(n.value)
                elif isinstance(t, (ast.Tuple, ast.List)) and any(
                    isinstance(x, ast.Name) and x.id == e.id for x in ast.walk(t)
                ):
                    return None
                if (
                    isinstance(t, (ast.Tuple, ast.List))
                    and isinstance(n.value, ast.Attribute)
                    and n.value.attr == "shape"
                    and isinstance(n.value.value, ast.Name)
                    and n.value.value.id == e.id
                    and not any(isinstance(x, ast.Starred) for x in t.elts)
                ):
                    unpacked.add(len(t.elts))
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            target = getattr(n, "target", None)
            if target is not None and any(isinstance(x, ast.Name) and x.id == e.id for x in ast.walk(target)):
                return None
    if len(bindings) != 1:
        return None
    if bindings[0] is None and not unpacked:
        scope = ctx.scope
        if scope is not None and scope.function is func and scope.kind == "helper":
            return _helper_param_rank(func, e.id, ctx)
        return _input_rank(func, e.id, ctx)
    if bindings[0] is not None:
        r = _reshape_rank(bindings[0])
        if r is not None:
            return r
        if unpacked:
            return None  # rebound from something else: the unpack may read either value
    return unpacked.pop() if len(unpacked) == 1 else None


_ARRAY_MAKERS = frozenset({"ones", "zeros", "empty", "full"})
_RANDOM_DIMS = frozenset({"randn", "rand"})
_RANDOM_MODULES = ("numpy.random.", "mindspore.ops.", "mindspore.mint.")


def _helper_param_rank(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str, ctx: Context) -> int | None:
    """The rank of a parameter of a module-level helper that compiled code calls, when every
    call of it in the module passes a tensor of one known rank: an input of the calling
    `construct` / jit function (`_input_rank`) or a `view` / `reshape` (measured, written/
    heldout28b case `r2_tfm_transpose_neg_axes_matmul`: `attention(q, k, v)` from `construct`
    with 4-D inputs, `key.transpose(-2, -1)` in `attention` fails at both levels)."""
    if func not in ctx.tree.body:
        return None
    names = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if param not in names:
        return None
    index = names.index(param)
    ranks: set[int | None] = set()
    for caller in ast.walk(ctx.tree):
        if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)) or caller is func:
            continue
        for call in ast.walk(caller):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == func.name):
                continue
            given = next((k.value for k in call.keywords if k.arg == param), None)
            if given is None:
                if any(isinstance(a, ast.Starred) for a in call.args) or index >= len(call.args):
                    return None
                given = call.args[index]
            ranks.add(_argument_rank(given, caller, ctx))
            if len(ranks) > 1 or None in ranks:
                return None
    return ranks.pop() if len(ranks) == 1 else None


def _argument_rank(e: ast.expr, caller: ast.FunctionDef | ast.AsyncFunctionDef, ctx: Context) -> int | None:
    """The rank of an argument a compiled caller gives: a `view` / `reshape`, or an input
    of the caller when it is a compiled entry whose module-level calls say the rank."""
    direct = _reshape_rank(e)
    if direct is not None:
        return direct
    if not isinstance(e, ast.Name):
        return None
    scope = ctx.scopes.scope_for(caller)
    if scope is None or scope.kind not in ("construct", "jit"):
        return None
    stores = [n for n in ast.walk(caller) if isinstance(n, ast.Name) and n.id == e.id and not isinstance(n.ctx, ast.Load)]
    return None if stores else _input_rank(caller, e.id, ctx, scope.kind)


def _input_rank(
    func: ast.FunctionDef | ast.AsyncFunctionDef, param: str, ctx: Context, kind: str | None = None
) -> int | None:
    """The rank of a parameter of a compiled entry (a `construct` of a module-level network,
    an `@ms.jit` function) when every module-level call passes a tensor of one rank built
    there (`x = Tensor(np.random.randn(2, 3, 4))`, `ops.ones((2, 3, 4))`). `kind` given: the
    entry's scope kind, for a `func` other than the one being checked."""
    if kind is not None:
        return _entry_input_rank(func, param, ctx, kind)
    scope = ctx.scope
    if scope is None or scope.function is not func or scope.kind not in ("construct", "jit"):
        return None
    return _entry_input_rank(func, param, ctx, scope.kind)


def _entry_input_rank(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str, ctx: Context, kind: str) -> int | None:
    names = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if kind == "construct":
        names = names[1:]
    if param not in names:
        return None
    index = names.index(param)
    callers = entry_callers(func, kind, ctx)
    if callers is None:
        return None
    ranks: set[int | None] = set()
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call):
            continue
        if not callers.calls(node):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or index >= len(node.args):
            return None
        ranks.add(_module_rank(node.args[index], ctx, 0))
    return ranks.pop() if len(ranks) == 1 else None


def _module_rank(e: ast.expr, ctx: Context, depth: int) -> int | None:
    """Rank of a tensor built by module-level code: `Tensor(a)`, `a.astype(t)`, numpy or
    `ops` makers with a shape, `np.random.randn(2, 3)`, a name bound once at module level."""
    if depth > 6:
        return None
    if isinstance(e, ast.Name):
        bound = module_value_once(e.id, ctx)
        return _module_rank(bound, ctx, depth + 1) if bound is not None else None
    if not isinstance(e, ast.Call):
        return None
    f = e.func
    r = _reshape_rank(e)
    if r is not None:
        return r
    if isinstance(f, ast.Attribute) and f.attr in ("astype", "to", "float", "copy") and isinstance(f.value, ast.expr):
        return _module_rank(f.value, ctx, depth + 1)
    q = ctx.qualname(f) or ""
    last = q.rpartition(".")[2]
    if q in TENSOR_CLASS and e.args:
        return _module_rank(e.args[0], ctx, depth + 1)
    if q.startswith(("numpy.", "mindspore.ops.", "mindspore.numpy.")) and last in _ARRAY_MAKERS and e.args:
        shape = e.args[0]
        if isinstance(shape, (ast.Tuple, ast.List)) and not any(isinstance(x, ast.Starred) for x in shape.elts):
            return len(shape.elts)
        return 1 if isinstance(shape, ast.Constant) and type(shape.value) is int else None
    if q.startswith(_RANDOM_MODULES) and last in _RANDOM_DIMS and e.args:
        # numpy's `randn(2, 3)`; MindSpore's `ops.randn(2, 3)` / `ops.randn((2, 3))` (heldout28a
        # `r2_attn_scores_k_transpose_neg_two_args`: `ops.randn(1, 2, 4, 8)` fed to `k.transpose(-2, -1)`)
        only = e.args[0]
        if len(e.args) == 1 and isinstance(only, (ast.Tuple, ast.List)) and not q.startswith("numpy."):
            return None if any(isinstance(x, ast.Starred) for x in only.elts) else len(only.elts)
        if all(isinstance(a, ast.Constant) and type(a.value) is int for a in e.args):
            return len(e.args)
    if q.startswith("numpy.random.") and last in ("randint", "normal", "uniform"):
        size = next((k.value for k in e.keywords if k.arg == "size"), e.args[2] if len(e.args) >= 3 else None)
        if isinstance(size, (ast.Tuple, ast.List)):
            return len(size.elts)
    return None


def _reshape_rank(e: ast.expr) -> int | None:
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _RESHAPES):
        return None
    if e.keywords or not e.args or any(isinstance(a, ast.Starred) for a in e.args):
        return None
    if len(e.args) == 1:
        only = e.args[0]
        return len(only.elts) if isinstance(only, (ast.Tuple, ast.List)) and not any(
            isinstance(x, ast.Starred) for x in only.elts
        ) else None
    return len(e.args)
