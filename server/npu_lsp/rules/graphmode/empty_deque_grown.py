"""MS195: an empty `collections.deque` made in compiled code and grown in place."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes

#: deque methods that grow it in place
_GROW = frozenset({"append", "appendleft", "extend", "extendleft", "insert"})


@rule(code="MS195", name="empty-deque-grown", severity="error", family="graphmode")
class EmptyDequeGrown(GraphRule):
    """## What it does
    Flags `dq.append(...)` (also `appendleft`, `extend`, `extendleft`, `insert`) in compiled
    code (`construct`, a method it calls, an `@ms.jit` function) when `dq` is bound there to
    an empty `collections.deque()` (`deque()`, `deque(maxlen=n)`, `deque([])`); and
    `dq.append(...)` / `dq.extend(...)` of a deque made there from data (`deque(vals,
    maxlen=2)`, `deque([x])`) when `dq` is read afterwards. Under LAX, `appendleft` /
    `extendleft` / `insert` on an empty deque only when a read that needs its items follows
    (not `len(dq)`, not a `for` over it).

    ## Why is this bad?
    MindSpore 2.10 has no graph type for a deque: an empty one made in compiled code becomes
    `None` in the graph, and growing it stops the compile at every syntax level with
    `AttributeError: 'NoneType' object has no attribute 'append'`, whatever it holds
    (tensors or Python floats) and however it is read afterwards. A deque made from data
    (`deque([x])`) is run by JIT Fallback under LAX and compiles there while it is only
    read, or grown with `appendleft`; after `append` or `extend` the graph holds None for
    it, and reading it (`dq[0]`, `len(dq)`) fails at every level ("'NoneType' object is not
    subscriptable"). One made in `__init__` and only read compiles.

    ## Example
    ```python
    class Smooth(nn.Cell):
        def construct(self, frames):
            window = deque(maxlen=2)
            outs = []
            for i in range(frames.shape[0]):
                window.append(frames[i])
                outs.append(sum(window) / len(window))
            return ops.stack(outs)
    ```

    ## Use instead
    Keep a Python list and slice it (`window = window[-1:] + [frames[i]]`), or stay in
    tensors.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10 with the written sets `algorithms` (`lbfgs_history_deque`)
      and `everyday` (`closure_deque_history`) and the `algorithms` probes `dq_*`: `deque()`
      and `deque(maxlen=2)` grown with `append` in `construct` or an `@ms.jit` function are
      rejected at LAX and STRICT (then stacked, measured with `len`, indexed or iterated);
      `deque([x])` grown with `appendleft` and a deque only read compile under LAX; the
      famc probes `g17_dq_*`: `deque(data)` (floats of a tensor, constants, tensors,
      `x.tolist()`, with or without `maxlen`) grown by `append` or `extend` and then indexed
      or measured with `len` fail at LAX and STRICT, unread afterwards it compiles at LAX.
    - The written set heldout22a (`reinforce_returns_deque_numpy`,
      `r2_reinforce_deque_appendleft_range`) and its probes `la23_dq_*`: `deque()` grown by
      `appendleft` compiles under LAX unread (STRICT rejects it), and fails when its items
      are then needed (`ops.stack(list(dq))`: "For 'Stack', the 'len of input_x' ... got
      '0'"), also when the name is rebound to the stacked result afterwards.
    """

    nodes = (ast.Call,)
    words = ("deque(",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if type(f) is not ast.Attribute or f.attr not in _GROW or type(f.value) is not ast.Name:
            return ()
        return self._check(node, f, ctx)

    def _check(self, node: ast.Call, f: ast.Attribute, ctx: Context) -> Iterable[Diagnostic]:
        name = f.value.id  # type: ignore[attr-defined]
        a = analyzer(ctx)
        made = a.single_assignment(name, ctx.function)
        if made is None and a.rebinds(name, ctx.function):
            # rebound later (`returns = ops.stack(list(returns))` after the loop that grows
            # the deque): the binding every path to this call runs last decides (measured,
            # written/heldout22a case `reinforce_returns_deque_numpy`, probes `la23_dq_*`)
            last = a.dominating_assignment(f.value, ctx.function)  # type: ignore[arg-type]
            made = last.value if last is not None else None
        if not isinstance(made, ast.Call) or ctx.qualname(made.func) != "collections.deque":
            return
        if any(k.arg not in ("maxlen",) for k in made.keywords):
            return
        if made.args and not (isinstance(made.args[0], (ast.List, ast.Tuple)) and not made.args[0].elts):
            # made from data: LAX runs it by JIT Fallback, and `append` / `extend` leave None
            # behind (measured, written/famc probes `g17_dq_*`; `appendleft` compiles,
            # `dq_g_*`, `g17_dq_appendleft_len`; unread afterwards it compiles)
            if f.attr in ("append", "extend") and _read_after(name, node, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` is `{ctx.segment(made)}`, a deque made in compiled code: JIT Fallback builds it as Python, but after `{f.attr}` the graph holds None for it, and reading it fails to compile ('NoneType' object is not subscriptable / has no attribute '__len__'); use a Python list (`{name} = {name}[1:] + [item]`)",
                )
            return
        if f.attr not in ("append", "extend") and not (ctx.scope and ctx.scope.strict):
            # `appendleft` leaves the empty deque as it was under LAX: it compiles unless
            # something then needs its items (measured, written/heldout22a probes `la23_dq_*`:
            # unread it compiles, `ops.stack(list(dq))` fails "For 'Stack', the 'len of
            # input_x' ... got '0'"; STRICT rejects the deque either way)
            read = _read_after(name, node, ctx, items=True)
            if read is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{name}` is `{ctx.segment(made)}`, an empty deque made in compiled code: MindSpore has no graph deque, `{f.attr}` leaves it empty in the graph, and `{ctx.segment(ctx.parent(read) or read)}` on line {read.lineno} fails on an empty sequence (\"For 'Stack', the 'len of input_x' ... got '0'\"); use a Python list (`{name}.insert(0, item)`)",
                )
            return
        yield ctx.diagnostic(
            self,
            node,
            f"`{name}` is `{ctx.segment(made)}`, an empty deque made in compiled code: MindSpore has no graph deque, it is None here, and `{f.attr}` fails to compile at every level ('NoneType' object has no attribute '{f.attr}'); use a Python list",
        )


def _read_after(name: str, call: ast.Call, ctx: Context, items: bool = False) -> ast.Name | None:
    """A read of `name` in the function after the line of `call` (other than growing it);
    with `items`, only one that needs its items (not `len(name)`, not a `for` over it,
    which runs no turn)."""
    func = ctx.function
    if func is None:
        return None
    end = call.end_lineno or call.lineno
    names = [n for n in own_nodes(func) if type(n) is ast.Name and n.id == name and n.lineno > end]
    # reads after the next binding of the name read another value (`out = ops.stack(...)`)
    until = min((n.lineno for n in names if type(n.ctx) is not ast.Load), default=None)
    reads = sorted((n for n in names if type(n.ctx) is ast.Load), key=lambda n: (n.lineno, n.col_offset))
    for n in reads:
        if until is not None and n.lineno > until:
            break
        p = ctx.parent(n)
        if type(p) is ast.Attribute and p.attr in _GROW:
            continue
        if items and (
            (type(p) is ast.Call and type(p.func) is ast.Name and p.func.id == "len")
            or (isinstance(p, (ast.For, ast.comprehension)) and p.iter is n)
        ):
            continue
        return n
    return None
