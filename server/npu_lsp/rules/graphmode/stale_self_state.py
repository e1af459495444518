"""MS182: state on `self` changed in compiled code, read back there as `__init__` left it."""

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


@rule(code="MS182", name="stale-self-state-read", severity="error", family="graphmode")
class StaleSelfStateRead(GraphRule):
    """## What it does
    Flags a list stored on `self` as `[]` in `__init__`, appended in compiled code
    (`self.cache.append(k)`), and then, later in the same function, stacked or concatenated
    (`ops.stack(self.cache)`, `ops.concat`, `ops.cat`) or indexed (`self.cache[-1]`,
    also through a local name bound to it). `extend` counts under STRICT only. Likewise an
    attribute that is `None` in `__init__` and set by a method the compiled code calls
    (`self.scheduler.set_timesteps(n)`, `self.reset(n)`), then iterated, given to `len` or
    indexed later in the same function (`for t in self.scheduler.timesteps`).

    ## Why is this bad?
    The graph does not mutate a list held on `self`: after the `append` the function still
    reads the empty list of `__init__`, so compiling fails: `For 'Stack', the 'len of input_x'
    must be int and must >= 1, but got '0'`, `For primitive[Concat], the elements size must be
    greater than 0`, `For primitive:'list_getitem', cannot get item by index from an empty
    sequence`. A list that starts with elements compiles (the appended value is silently
    lost, see MS142), and so does `len(self.cache)` (it is 0). An attribute a called method
    sets is read back as its `__init__` value too: `'none' object is not iterable`,
    `'NoneType' object has no attribute '__len__'` (set directly in `construct`, LAX reads
    the new value).

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
      with a tensor, and `self.h + [x]` compile); probes `self_attr_*` / `sched_*` (a
      `None` attribute set by a method of the cell or of a cell or plain object it holds,
      then iterated or given to `len`: rejected at both levels; a list there, or the
      attribute set in `construct` itself or before the call, compiles under LAX).
    """

    nodes = (ast.Call,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        f = node.func
        if not isinstance(f, ast.Attribute):
            return
        if f.attr not in _LOST:
            yield from _set_by_method(self, node, f, ctx)
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


def _set_by_method(rule: StaleSelfStateRead, call: ast.Call, f: ast.Attribute, ctx: Context) -> Iterable[Diagnostic]:
    """`self.m(...)` / `self.h.m(...)` where method `m` sets `self.A` that `__init__` leaves
    None, and the compiled function then iterates, measures or indexes `<obj>.A`."""
    obj = f.value
    func = ctx.function
    if func is None:
        return
    a = analyzer(ctx)
    owner = a.owner_class(func)
    if owner is None:
        return
    if isinstance(obj, ast.Name) and obj.id == "self":
        cls: ast.ClassDef | None = owner
    elif isinstance(obj, ast.Attribute) and isinstance(obj.value, ast.Name) and obj.value.id == "self":
        cls = _held_class(owner, obj.attr, ctx)
    else:
        return
    if cls is None:
        return
    method = _methods(cls, ctx).get(f.attr)
    if method is None or method is func:
        return
    for attr in _none_attrs_set(cls, method, ctx):
        read = _consumed_after(obj, attr, call, func)
        if read is not None:
            yield ctx.diagnostic(
                rule,
                read,
                f"`{ast.unparse(obj)}.{attr}` is still None (its `__init__` value) here: `{f.attr}(...)` (line"
                f" {call.lineno}) sets it from compiled code, which the graph does not see; set it before"
                " calling the network, or return the value from the method",
            )


def _methods(cls: ast.ClassDef, ctx: Context) -> dict[str, ast.FunctionDef]:
    memo: dict[int, dict[str, ast.FunctionDef]] = ctx.cache.setdefault("MS182.methods", {})
    hit = memo.get(id(cls))
    if hit is None:
        hit = memo[id(cls)] = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    return hit


def _none_attrs_set(cls: ast.ClassDef, method: ast.FunctionDef, ctx: Context) -> list[str]:
    """The attributes `method` sets that `cls.__init__` leaves None (once per method)."""
    memo: dict[int, list[str]] = ctx.cache.setdefault("MS182.none-set", {})
    hit = memo.get(id(method))
    if hit is None:
        init = analyzer(ctx)._self_values(cls)
        nones = {a for a, vs in init.items() if vs and all(isinstance(v, ast.Constant) and v.value is None for v in vs)}
        hit = memo[id(method)] = sorted(_assigned_attrs(method) & nones) if nones else []
    return hit


def _held_class(owner: ast.ClassDef, attr: str, ctx: Context) -> ast.ClassDef | None:
    """The class of this module built into `self.<attr>` by `owner`'s `__init__`."""
    values = analyzer(ctx)._self_values(owner).get(attr) or []
    if len(values) != 1 or not isinstance(values[0], ast.Call) or not isinstance(values[0].func, ast.Name):
        return None
    name = values[0].func.id
    return next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == name), None)


def _assigned_attrs(method: ast.FunctionDef) -> set[str]:
    """`self.<attr> = ...` targets directly in `method` (not in nested functions)."""
    out: set[str] = set()
    for n in _walk_own(method):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.add(t.attr)
    return out


def _consumed_after(obj: ast.expr, attr: str, call: ast.Call, func: ast.AST) -> ast.AST | None:
    """The first iteration, `len` or index of `<obj>.<attr>` after `call` in `func`."""
    want = ast.dump(obj)

    def same(e: ast.expr) -> bool:
        return isinstance(e, ast.Attribute) and e.attr == attr and ast.dump(e.value) == want

    found: ast.AST | None = None
    for n in _walk_own(func):
        if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) <= (call.lineno, call.col_offset):
            continue
        if isinstance(n, ast.For):
            hit: ast.AST | None = n.iter if same(n.iter) else None
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args:
            hit = n if same(n.args[0]) else None
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
            hit = n if same(n.value) else None
        else:
            hit = None
        if hit is not None and (found is None or (hit.lineno, hit.col_offset) < (found.lineno, found.col_offset)):  # type: ignore[attr-defined]
            found = hit
    return found
