"""MS148: (STRICT) a dict returned by the top graph is read as a dict by the Python caller."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import returns_in
from npu_lsp.scope import FuncDef

#: what only a dict answers (a tuple has none of these)
_DICT_METHODS = frozenset({"keys", "values", "items", "get"})


@rule(code="MS148", name="dict-output-under-strict", severity="error", family="graphmode")
class DictOutputUnderStrict(Rule):
    """## What it does
    Under the STRICT syntax level, flags Python code that reads the result of a network
    (a Cell's `construct`) or an `@ms.jit` function as a dict (`out["logits"]`,
    `out.items()`, `out.get("loss")`) when the compiled function returns a dict.

    ## Why is this bad?
    Under STRICT, MindSpore hands a dict output of the top graph back to Python as a tuple
    of its values, so the caller fails outside the graph: `TypeError: tuple indices must be
    integers or slices, not str`. The default LAX level returns a real dict.

    ## Example
    ```python
    class Head(nn.Cell):
        def construct(self, x):
            return {"start": x[:, 0], "end": x[:, 1]}

    out = Head()(x)
    print(out["start"])
    ```

    ## Use instead
    Return a tuple and unpack it (`start, end = Head()(x)`), or keep the LAX level.

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured: a dict output at STRICT reaches Python as `tuple`, at LAX
      as `dict` (Cell `construct` and `@ms.jit` function alike).
    - RULES.md has no row for it (found by the independently written set `nlp`).
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        if not any(s.strict and s.kind in ("construct", "jit") for s in ctx.scopes.scopes.values()):
            return  # only such a scope's dict output is reported: none in reach of this file
        memo: dict[str, FuncDef | None] = {}
        held: dict[str, FuncDef] = {}  # module-level name -> function whose dict output it holds
        for st in _module_statements(node):
            for sub in ast.walk(st):
                if isinstance(sub, ast.Subscript) and _str_key(sub.slice):
                    fn = self._dict_source(sub.value, held, memo, ctx)
                    if fn is not None:
                        yield self._report(sub, fn, ctx)
                elif (
                    isinstance(sub, ast.Call)
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr in _DICT_METHODS
                ):
                    fn = self._dict_source(sub.func.value, held, memo, ctx)
                    if fn is not None:
                        yield self._report(sub, fn, ctx)
            if isinstance(st, ast.Assign):
                fn = self._compiled_dict_call(st.value, memo, ctx)
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        if fn is not None:
                            held[t.id] = fn
                        else:
                            held.pop(t.id, None)

    def _report(self, node: ast.expr, fn: FuncDef, ctx: Context) -> Diagnostic:
        return ctx.diagnostic(
            self,
            node,
            f"`{fn.name}` returns a dict, which STRICT graph mode hands back as a tuple of its values; `{ctx.segment(node)}` fails on it",
        )

    def _dict_source(
        self, e: ast.expr, held: dict[str, FuncDef], memo: dict[str, FuncDef | None], ctx: Context
    ) -> FuncDef | None:
        if isinstance(e, ast.Name):
            return held.get(e.id)
        return self._compiled_dict_call(e, memo, ctx)

    def _compiled_dict_call(
        self, e: ast.expr, memo: dict[str, FuncDef | None], ctx: Context
    ) -> FuncDef | None:
        """The compiled STRICT function a module-level call runs, when it returns a dict."""
        if not isinstance(e, ast.Call):
            return None
        key, fn = self._callee(e.func, ctx)
        if fn is None:
            return None
        if key not in memo:
            scope = ctx.scopes.scope_for(fn)
            ok = scope is not None and scope.strict and scope.kind in ("construct", "jit") and _returns_dict(fn, ctx)
            memo[key] = fn if ok else None
        return memo[key]

    def _callee(self, f: ast.expr, ctx: Context) -> tuple[str, FuncDef | None]:
        info = ctx.scopes.info
        if isinstance(f, ast.Name):
            if f.id in info.instances:
                return f.id, _construct(info.instances[f.id], ctx)
            fn = info.functions.get(f.id)
            return f.id, fn
        if isinstance(f, ast.Call):  # `Net()(x)`
            q = ctx.qualname(f.func)
            if q is not None and ctx.scopes.is_cell_class(q):
                return q, _construct(q, ctx)
        return "", None


def _construct(cls_qual: str, ctx: Context) -> FuncDef | None:
    found = ctx.scopes._method(cls_qual, "construct")
    return found[2] if found is not None else None


def _returns_dict(fn: FuncDef, ctx: Context) -> bool:
    a = analyzer(ctx)
    for ret in returns_in(fn.body):
        v = ret.value
        if v is None:
            continue
        if isinstance(v, (ast.Dict, ast.DictComp)) or a.type_class(v, fn) == "dict":
            return True
    return False


def _str_key(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and isinstance(e.value, str)


def _module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Module-level statements in order, looking into if/for/while/with/try blocks (not
    into function or class bodies)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            inner.extend(getattr(st, name, None) or [])
        for h in getattr(st, "handlers", None) or []:
            inner.extend(h.body)
        if inner:
            # the header (test / iterable) is walked with the statement; bodies follow
            yield _header(st)
            stack.extend(reversed(inner))
        else:
            yield st


def _header(st: ast.stmt) -> ast.stmt:
    """A compound statement stripped of its bodies (so walking it sees only its header)."""
    parts = [getattr(st, n) for n in ("test", "iter", "target") if isinstance(getattr(st, n, None), ast.AST)]
    for item in getattr(st, "items", None) or []:
        parts.append(item.context_expr)
    return ast.Expr(value=ast.Tuple(elts=parts, ctx=ast.Load())) if parts else ast.Pass()
