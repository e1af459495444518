"""MS126: sub-cells kept in a plain Python list."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import walk
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Severity, Span
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule


@rule(
    code="MS126", name="cells-in-python-list", severity="error", family="graphmode", fix="sometimes"
)
class CellsInPythonList(Rule):
    """## What it does
    Flags `self.attr = [...]` directly in a Cell's `__init__` when the list holds sub-cells
    (`[nn.Dense(3, 3) for _ in range(3)]`, `[Block(), Block()]`).

    ## Why is this bad?
    A plain list hides the sub-cells from the parent Cell: their Parameters are not
    registered under unique names, so compiling a `construct` that uses several of them fails
    with `RuntimeError: The parameter ..., its name 'weight' already exists.` (an error).
    Otherwise the code runs, but the parameters are missing from `trainable_params()`,
    optimizers and checkpoints (a warning).

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Dense(3, 3) for _ in range(3)]
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([nn.Dense(3, 3) for _ in range(3)])
    ```

    ## Fix safety
    The fix wraps the list in `nn.CellList(...)` when the module already refers to
    MindSpore's `nn` by a name it can reuse. It is safe: CellList supports indexing,
    iteration and `len` like a list.

    ## References
    - RULES.md, section 1: sub-cells held in a plain Python list.
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        for cls in ctx.scopes.info.classes.values():
            init = cls.methods.get("__init__")
            if init is None or not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{cls.name}"):
                continue
            # only a finding needs it (for its severity): most classes have none
            used = _LazyUsed(cls.methods.values(), ctx)
            empty_lists: set[str] = set()
            for st in init.body:
                if isinstance(st, ast.Assign):
                    yield from self._check_assign(st, used, ctx)
                    if isinstance(st.value, ast.List) and not st.value.elts:
                        empty_lists.update(_self_attrs(st.targets))
                elif empty_lists:
                    yield from self._check_appends(st, empty_lists, used, ctx)

    def _check_appends(
        self, st: ast.stmt, lists: set[str], used: _LazyUsed, ctx: Context
    ) -> Iterable[Diagnostic]:
        """`self.layers = []` then `self.layers.append(nn.Dense(...))`, possibly in a loop."""
        stmts = [st, *(st.body if isinstance(st, (ast.For, ast.While)) else [])]
        for s in stmts:
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
                continue
            call = s.value
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr in ("append", "insert", "extend")):
                continue
            attrs = _self_attrs([f.value])
            if attrs & lists and call.args and self._is_cell_call(call.args[-1], ctx):
                attr = next(iter(attrs))
                yield ctx.diagnostic(
                    self,
                    call,
                    f"sub-cells in a plain list are not registered; make `self.{attr}` an `nn.CellList`",
                    severity=_severity(attr, used, several=isinstance(st, (ast.For, ast.While))),
                )

    def _check_assign(
        self, node: ast.Assign, used: _LazyUsed, ctx: Context
    ) -> Iterable[Diagnostic]:
        value = node.value
        elements: list[ast.expr]
        if isinstance(value, ast.List):
            elements = value.elts
        elif isinstance(value, ast.ListComp):
            elements = [value.elt]
        else:
            return
        if not elements or not all(self._is_cell_call(e, ctx) for e in elements):
            return
        targets = [
            t
            for t in node.targets
            if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
        ]
        if not targets:
            return
        attr = targets[0].attr
        several = isinstance(value, ast.ListComp) or len(elements) > 1
        yield ctx.diagnostic(
            self,
            value,
            f"sub-cells in a plain list are not registered; wrap `self.{attr}` in `nn.CellList`",
            fix=self._fix(value, ctx),
            severity=_severity(attr, used, several),
        )

    @staticmethod
    def _is_cell_call(e: ast.expr, ctx: Context) -> bool:
        if not isinstance(e, ast.Call):
            return False
        q = ctx.qualname(e.func)
        return bool(q) and ctx.scopes.is_cell_class(q)  # type: ignore[arg-type]

    @staticmethod
    def _fix(value: ast.expr, ctx: Context) -> Fix | None:
        prefix = next(
            (name for name, target in ctx.scopes.info.imports.items() if target == "mindspore.nn"),
            None,
        )
        if prefix is None:
            ms = next(
                (name for name, target in ctx.scopes.info.imports.items() if target == "mindspore"),
                None,
            )
            prefix = f"{ms}.nn" if ms else None
        if prefix is None:
            return None
        s = ctx.span(value)
        return Fix(
            f"Wrap in `{prefix}.CellList(...)`",
            (
                Edit(Span(s.line, s.column, s.line, s.column), f"{prefix}.CellList("),
                Edit(Span(s.end_line, s.end_column, s.end_line, s.end_column), ")"),
            ),
            safe=True,
        )


def _self_attrs(targets: list[ast.expr]) -> set[str]:
    return {
        t.attr
        for t in targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }


class _LazyUsed:
    """`_attrs_used_in_graph` of a class, computed on first use."""

    def __init__(self, methods: Iterable[ast.AST], ctx: Context) -> None:
        self._methods, self._ctx = methods, ctx
        self._value: set[str] | None = None

    def __contains__(self, attr: object) -> bool:
        if self._value is None:
            self._value = _attrs_used_in_graph(self._methods, self._ctx)
        return attr in self._value


def _attrs_used_in_graph(methods: Iterable[ast.AST], ctx: Context) -> set[str]:
    """`self.<attr>` names read by the compiled methods of a class."""
    out: set[str] = set()
    for m in methods:
        if ctx.scopes.scope_for(m) is None:
            continue
        for n in walk(m):
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
            ):
                out.add(n.attr)
    return out


def _severity(attr: str, used: _LazyUsed, several: bool) -> Severity:
    """Compilation fails (parameter names clash) only when several cells of the list are
    used by compiled code; otherwise the parameters are "just" invisible to optimizers."""
    return "error" if several and attr in used else "warning"
