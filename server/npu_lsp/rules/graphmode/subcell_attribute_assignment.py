"""MS153: setting an attribute of a sub-cell in compiled code (`self.dropout.p = 0.0`)."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS153", name="subcell-attribute-assignment", severity="error", family="graphmode")
class SubcellAttributeAssignment(GraphRule):
    """## What it does
    Flags assignments to an attribute of a sub-cell in compiled code: `self.dropout.p = 0.0`,
    `self.scaler.scale = 2.0`, where `__init__` made `self.dropout` / `self.scaler` a Cell.
    Also storing a Cell on `self` in compiled code (`self.act = nn.Tanh()`, `self.act =
    self.other`) when `self.act` is a sub-cell already or is called afterwards: measured, it
    fails at both levels ("Sub cell 'act' already exists in network, can not assign this
    type"; a new attribute: "'int' object is not callable").

    ## Why is this bad?
    MindSpore cannot update another cell's attributes from a graph: at both syntax levels
    compilation ends in `RuntimeError: Default/Cast-op0 does not support this kernel data
    type: (<Int64xDefaultFormat>, object_type: [Tensor]) -> (<ProblemxDefaultFormat>, ...)`
    (measured with MindSpore 2.10 on a float attribute of a custom cell and on
    `nn.Dropout.p`).

    ## Example
    ```python
    def construct(self, x, deterministic=True):
        if deterministic:
            self.dropout.p = 0.0
        return self.dropout(x)
    ```

    ## Use instead
    Switch modes outside the graph (`net.set_train(False)` before calling it), or pass the
    value to the sub-cell as an argument.

    ## Fix safety
    No automatic fix.

    ## References
    - MindSpore 2.10, measured at LAX and STRICT.
    - RULES.md has no row for it (found by the independently written set `nlp`).
    - A Cell built from a registry of Cell classes (`HEADS[name](...)`, `HEADS = {"linear":
      nn.Dense}`) and stored on `self` in `construct`: written/heldout30a case
      `registry_lazy_head_built_in_construct` and probes `fix30e_lz_*`.
    """

    nodes = (ast.Assign, ast.AugAssign, ast.AnnAssign)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        if isinstance(node, ast.Assign) and _is_self_attr(targets[0]) and isinstance(node.value, (ast.Call, ast.Attribute)):
            return self._cell_stored(node, ctx)
        stores = [
            t
            for t in targets
            if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Attribute)
            and isinstance(t.value.value, ast.Name)
            and t.value.value.id == "self"
        ]
        return self._check(stores, ctx) if stores else ()

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Attribute or target is None  # an attribute among the targets

    def _cell_stored(self, node: ast.Assign, ctx: Context) -> Iterable[Diagnostic]:
        """`self.act = nn.Tanh()` / `self.act = self.other` in compiled code: measured
        (written/apisurface probes `av_self_assign_cell_*`), replacing a sub-cell fails at
        both levels ("Sub cell 'act' already exists in network, can not assign this type"),
        called or not, also in a helper method or an `@ms.jit` method; a Cell stored in a
        new attribute and called fails too ("'int' object is not callable")."""
        t = node.targets[0]
        assert isinstance(t, ast.Attribute)
        if not _cell_value(node.value, ctx):
            return
        if holds_cell(t.attr, ctx) or _called_on_self(t.attr, ctx.function):
            yield ctx.diagnostic(
                self,
                t,
                f"`{ctx.segment(t)} = {ctx.segment(node.value)}` stores a Cell on `self` in compiled code, which MindSpore cannot do (Sub cell already exists ... can not assign); build the sub-cells in `__init__` and choose between them",
            )

    def _check(self, stores: list[ast.Attribute], ctx: Context) -> Iterable[Diagnostic]:
        for t in stores:
            assert isinstance(t.value, ast.Attribute)
            if holds_cell(t.value.attr, ctx):
                yield ctx.diagnostic(
                    self,
                    t,
                    f"`{ctx.segment(t)}` sets an attribute of the sub-cell `{ctx.segment(t.value)}`, which compiled code cannot do",
                )


def _is_self_attr(t: ast.expr) -> bool:
    return isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"


def _cell_value(value: ast.expr, ctx: Context) -> bool:
    """A Cell: a new instance of a Cell class (`nn.Tanh()`) or a sub-cell (`self.other`)."""
    if isinstance(value, ast.Call):
        if isinstance(value.func, ast.Subscript):
            return _cell_class_registry(value.func.value, ctx)
        q = ctx.qualname(value.func)
        return q is not None and ctx.scopes.is_cell_class(q)
    return _is_self_attr(value) and holds_cell(value.attr, ctx)  # type: ignore[attr-defined]


def _cell_class_registry(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a module-level dict display whose values are all Cell classes (`HEADS =
    {"linear": nn.Dense}`)? Whatever key picks the entry, calling it builds a Cell
    (measured, written/heldout30a case `registry_lazy_head_built_in_construct` and probes
    `fix30e_lz_*`: `self.head = HEADS[cfg["type"]](8, 3)` then `self.head(feat)` fails at
    LAX with "'int' object is not callable", as `self.head = nn.Dense(8, 3)` does; kept in
    a local it compiles)."""
    from npu_lsp.rules.graphmode import constructed

    if not isinstance(e, ast.Name):
        return False
    table = constructed.built(e, None, ctx)
    if not (isinstance(table, ast.Dict) and table.values and None not in table.keys):
        return False
    for v in table.values:
        q = ctx.qualname(v) if isinstance(v, (ast.Name, ast.Attribute)) else None
        if q is None or not ctx.scopes.is_cell_class(q):
            return False
    return True


def _called_on_self(attr: str, func: ast.AST | None) -> bool:
    """Does `func` call `self.<attr>(...)`?"""
    return func is not None and any(
        isinstance(n, ast.Call) and _is_self_attr(n.func) and n.func.attr == attr  # type: ignore[attr-defined]
        for n in ast.walk(func)
    )


def holds_cell(attr: str, ctx: Context) -> bool:
    """Does `__init__` bind `self.<attr>` to a Cell (not a `@jit_class` instance)?"""
    cls = analyzer(ctx).owner_class(ctx.function)
    info = ctx.scopes.info
    owner = info.classes.get(cls.name) if cls is not None else None
    target = owner.attr_types.get(attr) if owner else None
    if target is None:
        return False
    mod, _, name = target.rpartition(".")
    held = info.classes.get(name) if mod == info.module else None
    if held is not None and held.jit_class:
        return False
    return ctx.scopes.is_cell_class(target)
