"""MS135: Python's `random` module drawing Cells or functions, or sampling a run-time range, in compiled code."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from functools import cache
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.cell_built_from_runtime_value import is_cell
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@cache
def _table() -> dict[str, object]:
    data: dict[str, object] = json.loads(resources.files(__package__).joinpath("ms_random.json").read_text("utf-8"))
    return data


@cache
def random_numbers() -> frozenset[str]:
    """The `random` functions whose result is a Python number (`ms_random.json`)."""
    names = _table()["numbers"]
    assert isinstance(names, list)
    return frozenset(names)


@rule(code="MS135", name="python-random-in-graph", severity="error", family="graphmode")
class PythonRandomInGraph(GraphRule):
    """## What it does
    Flags calls of Python's `random` module in compiled code that MindSpore cannot build:
    `random.choice`, `random.choices`, `random.sample` or `random.shuffle` of Cells or
    functions (`random.sample([self.blur, self.noise], 2)` with methods of the network,
    `random.choice((self.a, self.b))` with sub-cells, `random.choice([ops.relu,
    ops.tanh])`, a local list or a `self` list of them, an `nn.CellList` on `self` or a slice
    of it: `random.choice(self.choices)`), at every syntax level; and under LAX `random.sample(range(n), k)` where `n` is a
    number read from a run-time tensor (`range(int(labels.max()) + 1)`, `.item()`).

    ## Why is this bad?
    The graph runs a `random` call by JIT Fallback, as a Python script whose result it only
    knows at run time. Cells and functions cannot travel through such a script: MindSpore
    2.10 stops with `Unsupported element type[unknown] to set element data type for
    KernelTensor.`, even when the picked Cell is never called. A `range` of a run-time
    number is not a Python sequence inside the graph, so `random.sample` of it fails with
    `Population must be a sequence`, even when the sample is never read (STRICT refuses it
    as a script on a variable, MS131). Measured accepted: `random` calls on constants
    (`random.random() < 0.5`, `random.uniform(0.5, 1.5)`, `random.randint(0, 3)`,
    `random.sample(range(4), 2)`, `random.choice(["sum", "mean"])`: drawn once while
    compiling, so every call of the network sees the same draw), a range of a shape,
    `random.choice(range(int(t) + 1))`, indexing a list of Cells with
    `random.randint(0, 1)`, and `random.choice` of an `nn.SequentialCell`.

    ## Example
    ```python
    def construct(self, x):
        for op in random.sample([self.blur, self.noise], 2):
            x = op(x)
        return x
    ```

    ## Use instead
    Draw on the device and branch on the draw, or draw outside the network and pass the
    choice in:
    ```python
    def construct(self, x):
        if ops.rand(()) < 0.5:
            return self.noise(self.blur(x))
        return self.blur(self.noise(x))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (JIT Fallback runs Python calls the graph cannot build).
    - Measured on MindSpore 2.10 with the written set heldout15b probes `ls_rnd_*` (Cells,
      a tuple, a local or `self` list of Cells, `choices`, `shuffle`, module functions:
      rejected at LAX and STRICT; `sample(range(int(t) + 1), k)`: rejected at LAX, also
      unused, in a loop and with `.item()`; constants, shapes and `choice` of a run-time
      range compile under LAX) and its cases `r2_restore_degradation_pipeline_random`,
      `meta_task_sampler_random`.
    - A `CellList`: written/heldout40c case `r2_spos_random_choice_of_celllist_direct` and
      probes `fix40e_rnd_choice_*` (`random.choice` of a CellList, also unused or of a
      slice, rejected at both levels; of a `SequentialCell` it compiles).
    """

    nodes = (ast.Call,)
    words = ("random",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Call)
        if type(node.func) is not ast.Attribute or ctx.function is None:
            return
        q = ctx.qualname(node.func) or ""
        at = _table()["population"].get(q)  # type: ignore[attr-defined]
        if at is None or len(node.args) <= at:
            return
        population = node.args[at]
        callable_ = _callable_item(population, ctx)
        if callable_ is not None:
            yield ctx.diagnostic(
                self,
                node,
                f"`{q}` of `{ctx.segment(population)}` picks from callables (`{ctx.segment(callable_)}`): the graph runs it as a Python script, and Cells and functions cannot come out of one (MindSpore: Unsupported element type[unknown] to set element data type for KernelTensor); draw with `ops.rand` and branch on the draw, or pick outside the network",
            )
            return
        if q in _table()["sample_from_range"] and ctx.scope and ctx.scope.level == "lax":  # type: ignore[operator]
            bound = _runtime_range_bound(population, ctx)
            if bound is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`{q}` of `{ctx.segment(population)}`: `{ctx.segment(bound)}` is read from a run-time tensor, so the range is not a Python sequence in the graph (MindSpore: Population must be a sequence); sample on the device (`ops.randperm`, `ops.multinomial`) or sample a constant range",
                )


def _callable_item(population: ast.expr, ctx: Context) -> ast.expr | None:
    """The first item of `population` that is a Cell or a function: a list or tuple
    display, a local bound once to one, or a `self` attribute `__init__` binds to one."""
    container = population.value if type(population) is ast.Subscript else population
    if _cell_container(container, ctx):
        # the cells of a `CellList` on `self` (or of a slice of it): the
        # script is handed the container and picks a Cell out of it (measured, written/
        # heldout40c case `r2_spos_random_choice_of_celllist_direct`, probes `fix40e_rnd_choice_*`:
        # also unused, and of a slice)
        return population
    items = _items(population, ctx)
    return next((e for e in items if _is_callable(e, ctx)), None)


#: the cell containers whose items the script cannot hand back: `random.choice` of an
#: `nn.SequentialCell` compiles at both levels (measured, probe `fix40e_rnd_choice_sequential`)
_CELL_CONTAINERS = frozenset({"mindspore.nn.CellList"})


def _cell_container(e: ast.expr, ctx: Context) -> bool:
    """Is `e` `self.<attr>` that every `__init__` store binds to `nn.CellList(...)`?"""
    if not (type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    values = a.self_values(cls).get(e.attr, []) if cls is not None else []
    return bool(values) and all(
        type(v) is ast.Call and ctx.qualname(v.func) in _CELL_CONTAINERS for v in values
    )


def _items(e: ast.expr, ctx: Context) -> list[ast.expr]:
    if type(e) is ast.Name:
        bound = analyzer(ctx).single_assignment(e.id, ctx.function)
        return list(bound.elts) if type(bound) in (ast.List, ast.Tuple) else []  # type: ignore[union-attr]
    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(e.attr, []) if cls is not None else []
        if len(values) == 1 and type(values[0]) in (ast.List, ast.Tuple):
            return list(values[0].elts)  # type: ignore[union-attr]
        return []
    return list(e.elts) if type(e) in (ast.List, ast.Tuple) else []  # type: ignore[attr-defined]


def _is_callable(e: ast.expr, ctx: Context) -> bool:
    """A Cell (`self.act`, `nn.ReLU()`) or a function (`ops.relu`, a module-level `def`, a
    method of the network: `self.blur`)."""
    if is_cell(e, ctx):
        return True
    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self":
        # a bound method of the network (`self.blur`)
        cls = analyzer(ctx).owner_class(ctx.function)
        return cls is not None and any(
            isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == e.attr for st in cls.body
        )
    if type(e) not in (ast.Name, ast.Attribute):
        return False
    q = ctx.qualname(e) or ""
    if q.startswith("mindspore.ops.") and q.rsplit(".", 1)[-1][:1].islower():
        return True
    if type(e) is ast.Name and analyzer(ctx).first_binding_line(e.id, ctx.function) is None:
        return any(type(st) is ast.FunctionDef and st.name == e.id for st in ctx.tree.body)
    return False


def _runtime_range_bound(e: ast.expr, ctx: Context) -> ast.expr | None:
    """The argument of `range(...)` that holds a number read from a run-time tensor."""
    if type(e) is not ast.Call or ctx.qualname(e.func) != "builtins.range":
        return None
    a = analyzer(ctx)
    return next((b for b in e.args if a.kind(b) == Kind.VAR), None)
