"""MS151: a list or dict filled in place by a helper that compiled code calls."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names

_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault"})
# mindspore.ops functions that need at least one element
_NEEDS_ELEMENTS = frozenset({"stack", "concat", "cat", "hstack", "vstack", "Stack", "Concat"})
#: library functions that fill their first (list) argument in place: compiled code runs them
#: as Python on a copy of a graph list
_LIBRARY_FILLERS = frozenset({"heapq.heappush"})
#: library functions that take an item out of their first (list) argument
_LIBRARY_TAKERS = frozenset({"heapq.heappop", "heapq.heapreplace", "heapq.heappushpop"})


@rule(code="MS151", name="container-mutated-in-helper", severity="error", family="graphmode")
class ContainerMutatedInHelper(GraphRule):
    """## What it does
    Flags a call in compiled code, used as a statement, of a helper (a function of the module
    or a method of the cell) that fills one of its list or dict arguments in place
    (`lst.append(t)`, `d[k] = v`) instead of returning it.
    Also a call of a function defined inside the compiled one that fills a list or dict of
    the enclosing function (`def hook(h): feats.append(h)`) when the enclosing function
    bound it empty, never fills it itself and later stacks or subscripts it. Also
    `heapq.heappush(h, item)` on a list compiled code bound empty and later reads with
    `heapq.heappop(h)` (`heapreplace`, `heappushpop`) or an index.
    A caller's container bound to a display with items counts when the caller then reads a
    constant key the display lacks (`d["b"]` after `d = {"a": x}`) or an index past the
    list's length. (A sub-cell filling its argument is MS222's.)

    ## Why is this bad?
    In a graph, lists and dicts are values: the helper changes its own copy and the caller's
    container stays as it was. When the caller then reads what the helper should have put
    there, compiling fails: `ValueError: For 'Stack', the 'len of input_x' must be int and
    must >= 1, but got '0'` for a list that stayed empty, `ValueError: The key a does not
    exist in the dict:{}` for a dict (an error). Otherwise the result is silently different
    from PyNative (a warning). `heapq.heappush` is such a function: the heap stays empty
    and `heapq.heappop(h)` fails with `IndexError: index out of range` at LAX and STRICT,
    even for constant items (written heldout14b probes `hv_heap_push_pop`,
    `hv_heappush_const_pop`; `len(h)` compiles under LAX and gives 0).

    ## Example
    ```python
    def add_feat(feats, t):
        feats.append(t)

    class Net(nn.Cell):
        def construct(self, x):
            feats = []
            add_feat(feats, x)
            return ops.stack(feats)
    ```

    ## Use instead
    Return the container and rebind it:
    ```python
    def add_feat(feats, t):
        feats.append(t)
        return feats

    class Net(nn.Cell):
        def construct(self, x):
            feats = []
            feats = add_feat(feats, x)
            return ops.stack(feats)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4 (containers mutated in compiled code: the change is not seen
      outside, as with a list held on `self`).
    """

    nodes = (ast.Expr, ast.Assign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every expression statement of compiled code comes here
        assert (type(node) is ast.Expr or type(node) is ast.Assign)
        call = node.value
        if type(call) is not ast.Call or ctx.function is None:
            return ()
        if type(call.func) is ast.Name:
            nested = _nested_defs(ctx).get(call.func.id)
            if nested is not None:
                return self._closure(node, nested, ctx)
        if isinstance(node, ast.Assign):
            return ()
        if call.args and type(call.args[0]) is ast.Name and ctx.qualname(call.func) in _LIBRARY_FILLERS:
            return self._library(node, call, call.args[0], ctx)
        helper, offset = _helper(call.func, ctx)
        if helper is None:
            return ()
        return self._check(node, call, helper, offset, ctx)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return value is ast.Call  # `check`'s first test

    def wants_assigned_call(self, target: type[ast.AST] | None, callee: type[ast.AST]) -> bool:
        return callee is ast.Name  # an assigned call is looked at for a nested def's name only

    def _check(
        self, node: ast.Expr | ast.Assign, call: ast.Call, helper: ast.FunctionDef, offset: int, ctx: Context, warn: bool = True
    ) -> Iterable[Diagnostic]:
        yield from fills_in_place(self, node, call, helper, offset, ctx, warn)

    def _library(self, node: ast.Expr, call: ast.Call, arg: ast.Name, ctx: Context) -> Iterable[Diagnostic]:
        """`heapq.heappush(h, item)` on a list bound empty in compiled code, later read:
        the push changes a copy and `h` stays empty (measured, written/heldout14b probes
        `hv_heap_push_pop`, `hv_heappush_const_pop`: `heapq.heappop(h)` fails with "index
        out of range" at LAX and STRICT, also for constant items; `len(h)` compiles under
        LAX, giving 0)."""
        read = _read_expecting_content(arg.id, node, ctx)
        if read is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(call.func)}` fills `{arg.id}` in place, but in a graph it runs on a copy and `{arg.id}` stays empty, and line {read.lineno} reads it (`{ctx.segment(read)}`); keep the scores in a tensor and use `ops.topk` / `ops.sort`, or run the heap outside construct",
            )

    def _closure(self, stmt: ast.stmt, nested: ast.FunctionDef, ctx: Context) -> Iterable[Diagnostic]:
        """A function defined inside the compiled one that fills a list or dict of the
        enclosing function in place (`def hook(h): feats.append(h)`), called here while the
        enclosing function later reads what it should have put there (measured, written
        set `everyday` `deco_closure_list_append_outer`: "For 'Stack', the 'len of input_x'
        must be int and must >= 1, but got '0'")."""
        own = bound_names(nested, ctx, nested=True)
        for name, what in _mutated_names(nested).items():
            if name in own:
                continue
            read = _read_expecting_content(name, stmt, ctx, skip=nested)
            if read is not None:
                yield ctx.diagnostic(
                    self,
                    stmt,
                    f"`{nested.name}` fills the enclosing {what} `{name}` in place, but in a graph that change is not seen here, and line {read.lineno} reads it (`{ctx.segment(read)}`); have `{nested.name}` return what it adds and append it here",
                )
                return


def fills_in_place(
    rule: Rule, node: ast.Expr | ast.Assign, call: ast.Call, helper: ast.FunctionDef, offset: int, ctx: Context, warn: bool = True
) -> Iterable[Diagnostic]:
    """`helper` (its first `offset` parameters not passed) fills a list or dict argument of
    `call` in place: an error when the caller then reads what only the helper put there
    (`_read_expecting_content`), else a warning when `warn` (shared with MS222)."""
    params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]][offset:]
    mutated = _mutated_params(helper)
    for param, arg in zip(params, call.args, strict=False):
        if param not in mutated or not isinstance(arg, ast.Name):
            continue
        read = _read_expecting_content(arg.id, node, ctx)
        what = "list" if mutated[param] == "list" else "dict"
        if read is not None:
            yield ctx.diagnostic(
                rule,
                node,
                f"`{helper.name}` fills its {what} argument `{param}` in place, but in a graph the caller's `{arg.id}` stays as it was, and line {read.lineno} reads it (`{ctx.segment(read)}`); return the {what} from `{helper.name}` and rebind `{arg.id}`",
            )
        elif warn:
            yield ctx.diagnostic(
                rule,
                node,
                f"`{helper.name}` fills its {what} argument `{param}` in place; in a graph the caller's `{arg.id}` does not change (return it and rebind instead)",
                severity="warning",
            )
        return


def _nested_defs(ctx: Context) -> dict[str, ast.FunctionDef]:
    """Functions defined in the body of the compiled function (not the function itself)."""
    fn = ctx.function
    key = ("MS151-nested", id(fn))
    hit: dict[str, ast.FunctionDef] | None = ctx.cache.get(key)
    if hit is None:
        hit = {}
        # a nested `def` starts on a line after the function's own (a compound statement
        # cannot follow `def f():` on its line): no "def" in those lines, no walk
        end = getattr(fn, "end_lineno", None)
        if fn is not None and (end is None or "def" in "\n".join(ctx.lines[fn.lineno : end])):  # type: ignore[attr-defined]
            for n in ast.walk(fn):
                if isinstance(n, ast.FunctionDef) and n is not fn:
                    hit[n.name] = n
        ctx.cache[key] = hit
    return hit


def _mutated_names(fn: ast.FunctionDef) -> dict[str, str]:
    """Names `fn` changes in place: name -> "list" or "dict" (as far as the mutation tells)."""
    out: dict[str, str] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            if n.func.attr in _MUTATORS:
                out.setdefault(n.func.value.id, "dict" if n.func.attr in ("update", "setdefault") else "list")
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.setdefault(t.value.id, "dict")
    return out


def _helper(func: ast.expr, ctx: Context) -> tuple[ast.FunctionDef | None, int]:
    """The function a call reaches (a module-level `def`, or `self.method`) and how many of
    its leading parameters the call does not pass (`self`)."""
    if type(func) is ast.Name:
        for st in ctx.tree.body:
            if isinstance(st, ast.FunctionDef) and st.name == func.id:
                return st, 0
        return None, 0
    if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self":
        cls = analyzer(ctx).owner_class(ctx.function)
        if cls is None:
            return None, 0
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name == func.attr:
                static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in item.decorator_list)
                return item, 0 if static else 1
    return None, 0


def _mutated_params(helper: ast.FunctionDef) -> dict[str, str]:
    """Parameters the helper changes in place and neither rebinds nor returns: name -> "list"
    or "dict" (as far as the mutation tells)."""
    names = {a.arg for a in [*helper.args.posonlyargs, *helper.args.args]}
    out: dict[str, str] = {}
    rebound: set[str] = set()
    for n in ast.walk(helper):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            if n.func.value.id in names and n.func.attr in _MUTATORS:
                out.setdefault(n.func.value.id, "dict" if n.func.attr in ("update", "setdefault") else "list")
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                    out.setdefault(t.value.id, "dict")
                elif isinstance(t, ast.Name):
                    rebound.add(t.id)
        elif isinstance(n, ast.Return) and n.value is not None:
            for sub in ast.walk(n.value):
                if isinstance(sub, ast.Name):
                    rebound.add(sub.id)  # returned: the caller may rebind from the result
    return {k: v for k, v in out.items() if k not in rebound}


def _read_expecting_content(
    name: str, call_stmt: ast.stmt, ctx: Context, skip: ast.AST | None = None
) -> ast.expr | None:
    """Where the caller reads what only the helper put in `name`: `name` was bound to an
    empty `[]` / `{}` literal, the caller never fills it itself, and a later statement
    subscripts it or stacks it. None when that cannot be told. `skip`: a nested function
    whose body is the helper's, not the caller's."""
    func = ctx.function
    if func is None:
        return None
    empty = False
    display: ast.List | ast.Dict | None = None
    for n in _walk_skipping(func, skip):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            if isinstance(n.value, (ast.List, ast.Dict)) and not (
                n.value.elts if isinstance(n.value, ast.List) else n.value.keys
            ):
                empty = True
            elif isinstance(n.value, (ast.List, ast.Dict)) and display is None:
                display = n.value
            else:
                return None  # bound to something else somewhere
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            if n.func.value.id == name and n.func.attr in _MUTATORS:
                return None  # the caller fills it itself
        elif isinstance(n, (ast.Assign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name for t in targets):
                return None
    if display is not None:
        return None if empty else _read_past_display(name, display, call_stmt, func, skip)
    if not empty:
        return None
    after = call_stmt.end_lineno or call_stmt.lineno
    for n in _walk_skipping(func, skip):
        if getattr(n, "lineno", 0) <= after:
            continue
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name and isinstance(n.ctx, ast.Load):
            return n
        if isinstance(n, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in n.args):
            q = ctx.qualname(n.func) or ""
            if q in _LIBRARY_TAKERS and isinstance(n.args[0], ast.Name) and n.args[0].id == name:
                return n
            if q.startswith("mindspore.") and q.rsplit(".", 1)[-1] in _NEEDS_ELEMENTS:
                return n
            if isinstance(n.func, ast.Call):  # ops.Stack()(feats)
                inner = ctx.qualname(n.func.func) or ""
                if inner.startswith("mindspore.") and inner.rsplit(".", 1)[-1] in _NEEDS_ELEMENTS:
                    return n
    return None


def _read_past_display(
    name: str, display: ast.List | ast.Dict, call_stmt: ast.stmt, func: ast.AST, skip: ast.AST | None
) -> ast.expr | None:
    """A read after `call_stmt` of what only the helper could have put into `name`, bound
    once to a display with items: a constant key the dict display lacks (its keys all
    constants), or a constant index past the list display's length."""
    if isinstance(display, ast.Dict):
        if not all(isinstance(k, ast.Constant) for k in display.keys):
            return None
        held = {k.value for k in display.keys if isinstance(k, ast.Constant)}
    after = call_stmt.end_lineno or call_stmt.lineno
    for n in _walk_skipping(func, skip):
        if getattr(n, "lineno", 0) <= after:
            continue
        if not (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name and isinstance(n.ctx, ast.Load)):
            continue
        key = n.slice
        if isinstance(display, ast.Dict):
            if isinstance(key, ast.Constant) and key.value not in held:
                return n
            continue
        size = len(display.elts)
        if any(isinstance(e, ast.Starred) for e in display.elts):
            return None
        sign = 1
        if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub):
            key, sign = key.operand, -1
        if isinstance(key, ast.Constant) and type(key.value) is int and not -size <= sign * key.value < size:
            return n
    return None


def _walk_skipping(root: ast.AST, skip: ast.AST | None) -> Iterable[ast.AST]:
    """`ast.walk(root)` without the subtree of `skip`."""
    if skip is None:
        yield from ast.walk(root)
        return
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in ast.iter_child_nodes(n) if c is not skip)
