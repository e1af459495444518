"""MS182: an empty list on `self`, appended in compiled code, then stacked or indexed."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

# measured on 2.10 (fixtures/written/generative/probes/self_list_*): `append` is lost at
# every level, `extend` only under STRICT (LAX runs it through the interpreter)
_LOST = {"append": False, "extend": True}  # method -> lost under STRICT only
# ops that need at least one element: ("For 'Stack', the 'len of input_x' must be int and
# must >= 1, but got '0'", "For primitive[Concat], the elements size must be greater than 0")
_NEEDS_ELEMENTS = frozenset({"mindspore.ops.stack", "mindspore.ops.concat", "mindspore.ops.cat"})


@rule(code="MS182", name="self-list-read-after-append", severity="error", family="graphmode")
class SelfListReadAfterAppend(GraphRule):
    """## What it does
    Flags a list stored on `self` as `[]` in `__init__`, appended in compiled code
    (`self.cache.append(k)`), and then, later in the same function, stacked or concatenated
    (`ops.stack(self.cache)`, `ops.concat`, `ops.cat`) or indexed (`self.cache[-1]`,
    also through a local name bound to it). `extend` counts under STRICT only.

    ## Why is this bad?
    The graph does not mutate a list held on `self`: after the `append` the function still
    reads the empty list of `__init__`, so compiling fails: `For 'Stack', the 'len of input_x'
    must be int and must >= 1, but got '0'`, `For primitive[Concat], the elements size must be
    greater than 0`, `For primitive:'list_getitem', cannot get item by index from an empty
    sequence`. A list that starts with elements compiles (the appended value is silently
    lost, see MS142), and so does `len(self.cache)` (it is 0).

    ## Example
    ```python
    class Step(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cache = []

        def construct(self, k):
            self.cache.append(k)
            return ops.concat(self.cache, 0)
    ```

    ## Use instead
    Keep the list local to the function, or keep the state in a `Parameter`:
    ```python
    class Step(nn.Cell):
        def construct(self, k, past):
            return ops.concat((past, k), 0)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: mutating a list held on `self` is silently lost.
    - Measured on MindSpore 2.10 (CPU): probes `self_list_*` in
      tests/npu_lsp/fixtures/written/generative/probes (append then `ops.stack`, `ops.cat`,
      `[-1]`, `[0]` through a local name are rejected at LAX and STRICT; `extend` then
      `ops.stack` at STRICT only; `len`, a `for` loop, returning the list, a list that starts
      with a tensor, and `self.h + [x]` compile).
    """

    nodes = (ast.Call,)
    calls = frozenset(_LOST)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr in _LOST):
            return
        recv = f.value
        if not (isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"):
            return
        func = ctx.function
        if func is None or (_LOST[f.attr] and not (ctx.scope and ctx.scope.strict)):
            return
        if not _empty_in_init(recv.attr, func, ctx) or _earlier_mutation(recv.attr, node, func, ctx):
            return  # the first `append` reports the read
        read = _later_read(recv.attr, node, func, ctx)
        if read is not None:
            yield ctx.diagnostic(
                self,
                read,
                f"`self.{recv.attr}` is still the empty list of `__init__` here: `self.{recv.attr}.{f.attr}(...)`"
                f" (line {node.lineno}) does not change a list held on `self` in a graph, so this fails to compile;"
                " keep the list local or the state in a Parameter",
            )


def _empty_in_init(attr: str, func: ast.AST, ctx: Context) -> bool:
    """Is `self.<attr>` only ever `[]` in `__init__`, and mutated nowhere outside `func`?"""
    a = analyzer(ctx)
    cls = a.owner_class(func)
    if cls is None:
        return False
    values = a._self_values(cls).get(attr)
    if not values or not all(isinstance(v, ast.List) and not v.elts for v in values):
        return False
    for item in cls.body:
        if item is func or not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or item.name == "construct":
            continue
        for n in ast.walk(item):
            if (
                isinstance(n, ast.Attribute)
                and n.attr == attr
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
                and not isinstance(ctx.parent(n), ast.Assign)  # `self.x = []` itself
            ):
                return False  # read or changed by another method (`__init__` filling it)
    return True


def _later_read(attr: str, call: ast.Call, func: ast.AST, ctx: Context) -> ast.AST | None:
    """The first stacking or indexing of `self.<attr>` (or a local name bound to it) after
    `call` in `func`, not looking into nested functions."""
    after = (call.lineno, call.col_offset)
    aliases: set[str] = set()
    found: ast.AST | None = None
    for n in _walk_own(func):
        if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) <= after:
            continue
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and _is_attr(n.value, attr, set()):
            aliases.add(n.targets[0].id)
    for n in _walk_own(func):
        if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) <= after:
            continue
        hit = False
        if isinstance(n, ast.Call) and n.args and (ctx.qualname(n.func) or "") in _NEEDS_ELEMENTS:
            hit = _is_attr(n.args[0], attr, aliases)
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and not isinstance(n.slice, ast.Slice):
            hit = _is_attr(n.value, attr, aliases)
        if hit and (found is None or (n.lineno, n.col_offset) < (found.lineno, found.col_offset)):  # type: ignore[attr-defined]
            found = n
    return found


def _earlier_mutation(attr: str, call: ast.Call, func: ast.AST, ctx: Context) -> bool:
    """Another counted `self.<attr>.append(...)` before `call` in `func`?"""
    strict = bool(ctx.scope and ctx.scope.strict)
    return any(
        isinstance(n, ast.Call)
        and n is not call
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _LOST
        and (strict or not _LOST[n.func.attr])
        and _is_attr(n.func.value, attr, set())
        and (n.lineno, n.col_offset) < (call.lineno, call.col_offset)
        for n in _walk_own(func)
    )


def _is_attr(e: ast.expr, attr: str, aliases: set[str]) -> bool:
    if isinstance(e, ast.Name):
        return e.id in aliases
    return isinstance(e, ast.Attribute) and e.attr == attr and isinstance(e.value, ast.Name) and e.value.id == "self"


def _walk_own(func: ast.AST) -> Iterable[ast.AST]:
    """The nodes of `func`'s body, not entering nested functions, lambdas or classes."""
    stack: list[ast.AST] = list(getattr(func, "body", []))
    while stack:
        n = stack.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)
