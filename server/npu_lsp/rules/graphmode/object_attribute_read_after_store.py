"""MS197: (STRICT) an attribute of a plain Python object stored in compiled code, then computed with."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import node_key
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.values import instances

#: {(owner expression's `node_key`, attribute): the statements storing it} of one function
_Stores = dict[tuple[object, str], list[ast.stmt]]


@rule(code="MS197", name="object-attribute-read-after-store", severity="error", family="graphmode")
class ObjectAttributeReadAfterStore(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags arithmetic (`obj.attr * x`, `-obj.attr`) or a
    comparison on `obj.attr` in compiled code after the same function stored `obj.attr =
    ...` (or `obj.attr += ...`), where `obj` is an instance of a plain class of the file (no
    base but `object`, undecorated or a `@dataclass`: neither a Cell nor a jit_class): a
    local (`m = Meter()`), an object kept on `self` in `__init__` (`self.cfg = Cfg()`, then
    `self.cfg.scale`), or a module-level one (`STATE = State()`). A store of `self.<name>`
    itself is not this rule's (see MS132).

    ## Why is this bad?
    MindSpore runs an attribute store on a Python object as a JIT Fallback script
    (`_jit_fallback_set_attr`), and every later read of that attribute in the function becomes
    a script output whose value is known only at run time. Computing with it is a script
    again, which STRICT refuses: `ValueError: When handling script '__input_key_0__ *
    __input_key_1__ in graph mode', the inputs should be constant, but found variable
    '__input_key_0__' to be nonconstant` (measured on 2.10 for `+`, `*`, unary `-` and `>`,
    with local, `self`-held and module-level objects, a dataclass, in `construct` and in an
    `@ms.jit` function, also after a store under a tensor `if`). The default LAX level runs
    the scripts at run time. Measured accepted: the store alone (also `m.total += 1` alone), reads of
    other attributes, a read before the store (in an earlier statement), and
    `self.cfg.calls = self.cfg.calls + 1` alone. Passing the read to a call or returning it
    crashes instead (not flagged).

    ## Example
    ```python
    class Meter:
        def __init__(self):
            self.total = 0

    class Net(nn.Cell):
        def construct(self, x):
            m = Meter()
            m.total = 4
            return x * (m.total + 1)
    ```

    ## Use instead
    Keep the value in a local (`total = 4`), or in a `Parameter` of the cell when it must
    outlive the call.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (STRICT only: what LAX hands to JIT Fallback).
    - mindspore/ccsrc/pipeline/jit/ps/parse/parse.cc (`MakeSetAttrNode`, reads marked
      `kObjectAttrChange`) and static_analysis/prim.cc (`InterpretSetAttrNode`).
    - Written set `famc`, probes `oa_*`; written set `spec`, probes `aa_*`.
    """

    nodes = (ast.Attribute,)
    strict_only = True

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Attribute)
        func = ctx.function
        if not isinstance(node.ctx, ast.Load) or func is None or not ctx.scope or not ctx.scope.strict:
            return
        stores = _stores(func, ctx)
        if not stores:
            return
        owner = node_key(node.value)
        found = stores.get((owner, node.attr))
        if not found:
            return
        parent = ctx.parent(node)
        if not (
            isinstance(parent, (ast.BinOp, ast.Compare))
            or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd))
        ):
            return  # measured: arithmetic, `-v` and comparisons; a call or a return crash instead
        stmt = _statement(node, ctx)
        if stmt is None or not any(_before(st, stmt, node.value) for st in found):
            return
        cls = instances(ctx).plain_object_class(node.value, func)
        if cls is None:
            return
        yield ctx.diagnostic(
            self,
            node,
            f"under STRICT `{ctx.segment(node)}` is read back after compiled code stored it (`{cls.name}` is a plain Python class): MindSpore runs the store as Python and the read becomes a run-time object, so `{ctx.segment(parent)}` is a script STRICT refuses (inputs should be constant); keep the value in a local or a Parameter",
        )


def _stores(func: ast.AST, ctx: Context) -> _Stores:
    """Attribute stores `<owner>.<attr> = ...` of `func` (not `self.<attr>`, not in nested
    functions), by the owner's source form (MindSpore keys them by the owner's text too)."""
    key = f"ms197-stores-{id(func)}"
    hit: _Stores | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    out: _Stores = {}
    body = getattr(func, "body", [])
    stack: list[ast.AST] = list(body) if isinstance(body, list) else []  # a lambda has no statements
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        targets: list[ast.expr] = []
        if isinstance(st, ast.Assign):
            targets = st.targets
        elif isinstance(st, (ast.AugAssign, ast.AnnAssign)) and (not isinstance(st, ast.AnnAssign) or st.value is not None):
            targets = [st.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id == "self"):
                out.setdefault((node_key(t.value), t.attr), []).append(st)  # type: ignore[arg-type]
        if isinstance(st, ast.stmt):
            stack.extend(c for c in ast.iter_child_nodes(st) if isinstance(c, ast.stmt))
    ctx.cache[key] = out
    return out


def _statement(node: ast.AST, ctx: Context) -> ast.stmt | None:
    cur: ast.AST | None = node
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = ctx.parent(cur)
    return cur if isinstance(cur, ast.stmt) else None


def _before(store: ast.stmt, read: ast.stmt, owner: ast.expr) -> bool:
    """Is the read parsed after the store? A later statement is; so is the value of the
    storing assignment itself when the owner is a plain name (measured: `STATE.step =
    STATE.step + 1` is refused; `self.cfg.count += 1` alone, and a read in an earlier
    statement, compile)."""
    if store is read:
        return isinstance(owner, ast.Name) and isinstance(store, ast.Assign)
    return store.lineno < read.lineno
