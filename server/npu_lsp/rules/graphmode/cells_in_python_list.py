"""MS126: sub-cells kept in a plain Python list."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from npu_lsp.astutil import walk
from npu_lsp.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.helpers import builtin_sequence_call
from npu_lsp.rules.graphmode.values import UNKNOWN, instances


@rule(
    code="MS126", name="cells-in-python-list", severity="error", family="graphmode", fix="sometimes"
)
class CellsInPythonList(Rule):
    """## What it does
    Flags `self.attr = [...]` (or a tuple, or a dict such as `{"cls": nn.Dense(4, 2), "box":
    nn.Dense(4, 4)}`) directly in a Cell's `__init__` when it holds sub-cells
    (`[nn.Dense(3, 3) for _ in range(3)]`, `[Block(), Block()]`); use `nn.CellList` /
    `nn.CellDict`. Also a comprehension choosing a cell or None per turn (`[Adapter(d) if i in
    layers else None for i in range(depth)]`) when its test is known for every turn and two
    or more reached entries hold a cell owning Parameters (one such turn, or one constant
    index, compiles).

    ## Why is this bad?
    A plain list, tuple or dict hides the sub-cells from the parent Cell: their Parameters are not
    registered under unique names, so compiling a `construct` that uses several cells with
    parameters fails with `RuntimeError: The parameter ..., its name 'weight' already
    exists.` (an error, reported where compiled code reads the attribute, as MindSpore does).
    Cells without parameters (`nn.ReLU()`, `nn.Dropout()`, pooling...) cannot clash, nor can
    `mindspore.nn` layers whose Parameter names differ (a `LayerNorm`'s gamma / beta beside
    a `Dense`'s weight / bias; a `BatchNorm1d` beside a `LayerNorm` clashes on gamma), and
    neither can one entry read alone: `self.heads["cls"](x)`, `self.paths[1](x)`, or
    `self.branches[modality](x)` with `modality` an argument of `construct` (the graph holds
    a string or int argument as a constant), `self.heads[self.head](x)` with `self.head` a
    string or int `__init__` stored (once, twice or in a loop: the same entry each time;
    written/heldout30a probes `fix30e_cd_*`) bring a single cell into the graph, and so does
    `self.adapters.get(tenant)` (with or without a default), while `tenant in self.adapters`
    brings none (measured: all compile; two such reads, or a loop over the keys, clash).
    Cells of the file's own classes are named by what they store on `self` (a sub-cell's
    Parameters become `attr.` + their path, an unnamed Parameter takes the attribute's name,
    a given `name=` is kept), so instances of two classes whose names differ (`fc.*` beside
    `fc1.*`, `lin.*` beside `proj.*`, `body.fc.weight` beside `body.weight`) compile, while
    two instances of one class, or two classes both storing `lin`, clash (written/heldout32b
    probes `fix32c_cl_*`). Cells inside an `nn.SequentialCell`, `nn.CellList` or
    `nn.CellDict` are named `<index or key>.` + their path there: `{"cls":
    nn.SequentialCell([nn.Dense(16, 3)]), "reg": nn.Dense(16, 1)}` (`0.weight` beside
    `weight`), `SequentialCell([Dense])` beside `SequentialCell([ReLU(), Dense])`
    (`1.weight`), `OrderedDict` keys that differ, or a class storing a `SequentialCell`
    beside one storing a `Dense` under one attribute (`net.0.weight`, `net.weight`) compile,
    while two `SequentialCell([Dense])` or two `CellList([Dense])` clash on `0.weight`
    (written/heldout38d probes `fix38d_sq_*`). A Parameter named from an argument of its Cell's `__init__`
    (`name=f"expert_{idx}_w"`, `"expert_" + str(idx)`) takes the value each construction
    passes: `[Expert(d, i) for i in range(e)]` or `[Expert(d, 0), Expert(d, 1)]` compile,
    a repeated literal or an argument all entries share (`f"expert_{d}_w"`) clashes
    (written/heldout35d probes `fix35i_cl_*`). A class of the file that, with its sub-cells, owns no Parameter
    cannot clash at all: `[Scale(0.5), Scale(2.0)]` storing only the number, `[MovingAvg(k)
    for k in kernels]` holding an `nn.AvgPool1d` (an `__init__` argument counts as no
    Parameter when every construction passes a literal, a Tensor, arithmetic, or a loop
    variable over such values; a branch of `__init__` no construction takes is left out:
    `if learn: self.s = Parameter(...)` with `learn` False everywhere); a Parameter given or
    built, or a Dense inside, clashes (written/heldout34a probes `fix34e_ncp_*`).
    A single cell cannot clash either: a display of one, or a comprehension whose count is
    one for every instance built in the file (`[nn.Conv2d(chs[i], chs[i + 1], 3) for i in
    range(len(chs) - 1)]` with `chs=(3, 8)`; written/heldout24b probes `fe24_celllist_*`),
    and so does a loop appending to a plain list or storing into a plain dict whose count
    is one (`for _ in range(channels): self.lin.append(nn.Dense(...))` with `channels=1`,
    `for name, size in sizes.items(): self.grns[name] = GRN(size, h)` with `VSN({"target":
    3}, 4)`, a dict comprehension over one name); appends and stores one after the other
    add up, by the names their cells bring (two `append(nn.Dense(4, 4))` clash, a GRN and a
    cell storing `proj` compile; written/heldout37c probes `fix37g_cl_*`). A loop whose
    count the file does not fix (a size read from the environment) is taken to clash.
    Otherwise the code runs, but the parameters are missing from `trainable_params()`,
    optimizers and checkpoints (a warning).

    A plain list or tuple of cells at module level, read by an `@ms.jit` function or a
    `construct`, clashes the same way (an error when several of its cells reach the graph).
    So does a plain dict filled by item stores (`self.tables = {}` then
    `self.tables[name] = nn.Embedding(...)` in a loop: `its name 'embedding_table' already
    exists`), and a plain list grown by a method that appends its argument (keras'
    `Sequential.add(layer)`), called with cells by `__init__` or on the built instance
    before the call (`model.add(nn.Dense(12, 2))` beside a list the constructor got).

    Also `sorted(self.encoders)` (or of `.keys()`) in compiled code when `self.encoders` is
    a plain dict of cells, registered or not: the dict is no graph constant, `sorted` runs
    as Python, and a loop over its result runs no turn (`For primitive[Concat], the elements
    size must be greater than 0, but got 0`, at LAX and STRICT).

    Entries registered one by one as child cells do not clash: a loop over the list (or dict)
    calling `self.insert_child_to_cell(name, cell)`, `setattr(self, name, cell)`,
    `self.__setattr__(name, cell)` or storing `self._cells[name] = cell` (pyGAT's `add_module`
    loop) puts every cell in `self._cells`, and before compiling
    `Cell.check_names_and_refresh_name` renames the parameters of all registered cells uniquely
    (measured: all compile). Registering only some entries, or `object.__setattr__` (which
    bypasses `Cell.__setattr__`), still clashes.

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
    - Layers with disjoint Parameter names (every name each may create, derived from
      MindSpore 2.10 by tests/npu_lsp/difftest/derive_layer_parameters.py): written/heldout23b
      `r2_plain_dict_distinct_params` and written/zoo probes `ld23_plain_*`.
    - `.get` and `in` measured on MindSpore 2.10 with the written heldout16b probes
      `fe_cd_*` (one `.get` by a constant or an argument compiles; two, or one in a loop,
      clash).
    - A list grown by an adder method, `sorted` of a dict of cells: the written set
      heldout27b (`seq_python_list_of_layers`, `seq_dict_of_branches`) and its probes
      `fix27b_cl_*`, `fix27b_dc_*` (a ReLU or LayerNorm added beside one Dense, a loop over
      the dict, `.keys()`, `list(...)`, `.items()`, `sorted` of a dict of floats compile).
    - Registration and dicts filled by item stores: the written set heldout18a
      (`r2_gnn_gat_multihead_concat_list_heads` compiles; `ctr_field_embedding_dict_of_dense`,
      `r2_ctr_embedding_tables_plain_dict_self` clash) and its probes `fe18a_rg_*`,
      `fe18a_ed_*`; `check_names_and_refresh_name` in mindspore/nn/cell.py (2.10).
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.Module)
        yield from self._module_level(node, ctx)
        may_register = _MayRegister()
        dict_calls = ctx.mentions("dict")  # `self.d = dict()` (a word lookup, once per file)
        # `self.<x>.append(` lines (a text scan, once per file), and `sorted` mentioned
        append_lines = _self_append_lines(ctx) if ctx.mentions("append") else []
        sorts = ctx.mentions("sorted")
        for cls in ctx.scopes.info.classes.values():
            init = cls.methods.get("__init__")
            if init is not None and cls.attr_params:
                yield from self._passed_in(cls.node, init, cls.attr_params, cls.methods, may_register, ctx)
            if init is not None and append_lines and _spans_any(cls.node, append_lines):
                yield from self._grown_by_adder(cls.node, init, cls.methods, may_register, ctx)
            if init is not None and sorts:
                yield from self._sorted_cell_dict(init, cls.methods, ctx)
            if init is None or not _assigns_containers(init.body, dict_calls):
                continue  # nothing below can report (the common case: no resolution asked)
            if not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{cls.name}"):
                continue
            # only a finding needs it (for its severity): most classes have none
            used = _LazyUsed(cls.methods.values(), ctx)
            wrapped = _wrapped_later(init.body)
            # entries registered one by one as child cells are named uniquely when compiled
            registered = _registered_entries(init, cls.methods) if may_register(ctx) else set()
            empty_lists: set[str] = set()
            empty_dicts: set[str] = set()
            stores: dict[str, list[ast.expr]] = {}
            appended: dict[str, list[ast.expr]] = {}
            for i, st in enumerate(init.body):
                if isinstance(st, ast.Assign):
                    attrs = _self_attrs(st.targets) - registered
                    if attrs and not attrs & wrapped.get(i, set()):
                        yield from self._check_assign(st, used, ctx, (cls.node, init))
                    if isinstance(st.value, ast.List) and not st.value.elts:
                        empty_lists.update(attrs - wrapped.get(i, set()))
                    elif isinstance(st.value, (ast.Dict, ast.Call)) and _empty_dict(st.value):
                        empty_dicts.update(attrs - wrapped.get(i, set()))
                if empty_lists and not isinstance(st, ast.Assign):
                    yield from self._check_appends(st, empty_lists, appended, used, ctx, (cls.node, init))
                if empty_dicts:
                    yield from self._check_stores(st, empty_dicts, stores, used, ctx, (cls.node, init))

    def _module_level(self, tree: ast.Module, ctx: Context) -> Iterable[Diagnostic]:
        """`layers = [nn.Dense(4, 4), nn.Dense(4, 4)]` at module level, read by a jit function
        or a `construct`: measured, the parameter names clash the same way (`... its name
        'weight' already exists`) when several of the cells reach the graph."""
        bound: dict[str, list[ast.Assign]] = {}
        for st in tree.body:
            if type(st) is ast.Assign:
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        bound.setdefault(t.id, []).append(st)
        for name, sts in bound.items():
            if len(sts) != 1:
                continue  # rebound (`layers = nn.CellList(layers)`): not the list any more
            value = sts[0].value
            if isinstance(value, (ast.List, ast.Tuple)):
                elements = value.elts
            elif isinstance(value, ast.ListComp):
                elements = [value.elt]
            else:
                continue
            if not elements or not all(self._is_cell_call(e, ctx) for e in elements):
                continue
            reads = _module_name_reads(name, tree, ctx)
            if not reads:
                continue
            read = _entries_of(reads, ctx)
            if read is None:
                reached = elements if isinstance(value, (ast.List, ast.Tuple)) else elements * 2
            else:
                keys, variable = read
                if isinstance(value, ast.ListComp):
                    reached = [elements[0]] * (len(keys) + variable)
                else:
                    n = len(elements)
                    reached = [e for i, e in enumerate(elements) if i in keys or i - n in keys]
                    reached += [elements[0]] * variable
            if not _may_clash([e for e in reached if _may_own_parameters(e, ctx)], ctx):
                continue
            s = ctx.span(value)
            yield ctx.diagnostic(
                self,
                value,
                f"sub-cells in a plain module-level {'tuple' if isinstance(value, ast.Tuple) else 'list'} `{name}` read by compiled code: their parameter names clash when compiled; wrap it in `nn.CellList`",
            )
            first = min(reads, key=lambda r: (r[0].lineno, r[0].col_offset))[0]
            yield ctx.diagnostic(
                self,
                first,
                f"`{name}` holds sub-cells in a plain Python container: their parameter names clash when compiled",
                related=(Related(ctx.path, s, f"`{name}` is built here"),),
            )

    def _check_appends(
        self,
        st: ast.stmt,
        lists: set[str],
        seen: dict[str, list[ast.expr]],
        used: _LazyUsed,
        ctx: Context,
        owner: tuple[ast.ClassDef, ast.AST],
    ) -> Iterable[Diagnostic]:
        """`self.layers = []` then `self.layers.append(nn.Dense(...))`, possibly in a loop. A
        loop whose count is one for every instance built in the file (`for _ in
        range(channels)` with `channels=1`) appends a single cell, which has nothing to clash
        with (measured, written/heldout37c `r2_dlinear_python_list_of_single_dense` and probes
        `fix37g_cl_append_*`: one cell compiles, two clash), while appends one after the
        other add up (`fix37g_cl_two_appends_same`: two `append(nn.Dense(4, 4))` clash)."""
        turns = _loop_count(st, owner, ctx)
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
                cell = call.args[-1]
                if turns != 0 and f.attr != "extend" and _may_own_parameters(cell, ctx):
                    # a loop of unknown count (or of two or more turns) appends it twice at least
                    seen.setdefault(attr, []).extend([cell] * (1 if turns == 1 else 2))
                several = _may_clash(seen.get(attr, []), ctx)
                severity = _severity(attr, used, several)
                yield ctx.diagnostic(
                    self,
                    call,
                    f"sub-cells in a plain list are not registered; make `self.{attr}` an `nn.CellList`",
                    severity=severity,
                )
                if severity == "error":
                    yield from self._use_site(attr, call, used, ctx)

    def _check_stores(
        self,
        st: ast.stmt,
        dicts: set[str],
        seen: dict[str, list[ast.expr]],
        used: _LazyUsed,
        ctx: Context,
        owner: tuple[ast.ClassDef, ast.AST],
    ) -> Iterable[Diagnostic]:
        """`self.tables = {}` then `self.tables[name] = nn.Embedding(...)`, in a loop or several
        times: measured (written/heldout18a, probes `fe18a_ed_*`), a plain dict filled by item
        stores clashes like a dict display (`its name 'embedding_table' already exists`)
        when compiled code reads several of its entries whose Parameter names meet
        (`_may_clash`). A loop whose count is one for every instance built in the file
        stores one cell (measured, written/heldout37c `r2_vsn_python_dict_single_variable`
        and probes `fix37g_cl_dict_*`: one GRN, or a GRN and a cell of disjoint names
        stored one after the other, compile; two GRNs clash on 'fc1.weight')."""
        loop = isinstance(st, (ast.For, ast.While))
        turns = _loop_count(st, owner, ctx) if loop else 1
        for s in [st, *(st.body if loop else [])]:  # type: ignore[attr-defined]
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
                continue
            t = s.targets[0]
            if not (isinstance(t, ast.Subscript) and isinstance(t.ctx, ast.Store)):
                continue
            attrs = _self_attrs([t.value]) & dicts
            if not attrs or not self._is_cell_call(s.value, ctx):
                continue
            attr = next(iter(attrs))
            if not _may_own_parameters(s.value, ctx):
                continue  # parameter-free cells cannot clash; nothing left unregistered
            if turns == 0:
                continue
            stores = seen.setdefault(attr, [])
            # a loop of unknown count (or of two or more turns) builds its cell at least twice
            stores.extend([s.value] * (1 if turns == 1 else 2))
            read = _entries_read_in_graph(attr, used.methods, ctx)
            reached = 2 if read is None else len(read[0]) + read[1]
            several = reached > 1 and _may_clash(stores, ctx)
            if not several or attr not in used:
                continue
            yield ctx.diagnostic(
                self,
                s.value,
                f"sub-cells stored in the plain dict `self.{attr}` are not registered: their parameter names clash when compiled; make it an `nn.CellDict`",
            )
            yield from self._use_site(attr, s.value, used, ctx)
            dicts.discard(attr)
            return

    def _check_assign(
        self, node: ast.Assign, used: _LazyUsed, ctx: Context, owner: tuple[ast.ClassDef, ast.AST]
    ) -> Iterable[Diagnostic]:
        value = node.value
        elements: list[ast.expr]
        if isinstance(value, (ast.List, ast.Tuple)):
            elements = value.elts
        elif isinstance(value, ast.ListComp):
            elements = [value.elt]
            if type(value.elt) is ast.IfExp:
                yield from self._check_optional_cells(node, value, used, ctx, owner)
                return
        elif isinstance(value, ast.Dict) and None not in value.keys:
            elements = value.values  # measured: a dict of cells clashes the same way
        elif isinstance(value, ast.DictComp):
            elements = [value.value]
        elif (built := _sequence_of_generator(value, ctx)) is not None:
            elements = [built.elt]  # `tuple(Block(d) for _ in range(n))`: clashes as a list does
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
        comprehension = isinstance(value, (ast.ListComp, ast.DictComp, ast.Call))  # `tuple(<gen>)` too
        if isinstance(value, (ast.ListComp, ast.DictComp)) and (count := _comprehension_count(value, owner, ctx)) is not None:
            if count == 0:
                return  # no cell at all
            if count == 1:
                # one cell: nothing to clash with (measured, written/heldout24b case
                # `r2_unet_blocks_python_list_single` and probes `fe24_celllist_*`: `[Conv2d(chs[i],
                # chs[i + 1], 3) for i in range(len(chs) - 1)]` with `chs=(3, 8)` compiles; with
                # `(3, 8, 8)` it clashes)
                comprehension = False
        # `self.heads["cls"](x)`, `self.paths[1](x)`, `self.branches[modality](x)` bring one
        # entry each into the graph (measured: a dict, list or tuple of two Dense cells
        # compiles when construct reads one entry, by a constant or by a string or int argument
        # of construct, which the graph holds as a constant; two reads or a loop clash)
        read = _entries_read_in_graph(attr, used.methods, ctx)
        if read is not None:
            keys, variable = read
            if isinstance(value, ast.Dict):
                picked = [
                    v
                    for k, v in zip(value.keys, value.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value in keys
                ]
            elif isinstance(value, (ast.List, ast.Tuple)):
                n = len(value.elts)
                picked = [e for i, e in enumerate(value.elts) if i in keys or i - n in keys]
            else:  # a comprehension: one template for every entry
                picked = [elements[0]] * len(keys)
            # an argument key reaches one entry we cannot name: count the worst one
            worst = next((e for e in elements if _may_own_parameters(e, ctx)), elements[0])
            elements = picked + [worst] * variable
            comprehension = False
        owners = [e for e in elements if _may_own_parameters(e, ctx)]
        # a comprehension builds its template once per turn: two turns may clash, unless its
        # Parameters are named after the turn's own loop value (`_resolved_names`)
        if comprehension and owners and ctx.mentions("name=") and _names_formatted(owners[0], ctx):
            several = _may_clash(owners * 2, ctx)
        else:
            several = bool(owners) and (comprehension or _may_clash(owners, ctx))
        severity = _severity(attr, used, several)
        if isinstance(value, (ast.Dict, ast.DictComp)):
            kind, wrapper = "dict", "nn.CellDict"
        else:
            tuple_made = isinstance(value, ast.Tuple) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "tuple"
            )
            kind, wrapper = ("tuple" if tuple_made else "list"), "nn.CellList"
        yield ctx.diagnostic(
            self,
            value,
            f"sub-cells in a plain {kind} are not registered; wrap `self.{attr}` in `{wrapper}`",
            fix=self._fix(value, ctx) if isinstance(value, (ast.List, ast.ListComp)) else None,
            severity=severity,
        )
        if severity == "error":
            yield from self._use_site(attr, value, used, ctx)

    def _check_optional_cells(
        self, node: ast.Assign, value: ast.ListComp, used: _LazyUsed, ctx: Context, owner: tuple[ast.ClassDef, ast.AST]
    ) -> Iterable[Diagnostic]:
        """`self.adapters = [Adapter(d) if i in layers else None for i in range(depth)]`: a
        plain list holding a cell on some turns (None, or a cell without Parameters, on the
        others). Measured (written/heldout36a case `adapter_optional_per_layer_python_list`,
        probes `fix36d_cl_*`): two or more turns giving the cell clash ("its name 'down.weight'
        already exists") when compiled code reaches them (a loop over the indexes, two constant
        indexes); one such turn (`i == depth - 1`, `layers=(1,)`), or one constant index, compiles.
        Only when every turn's choice is known (`_chosen_turns`): an error, never a guess."""
        elt = value.elt
        assert type(elt) is ast.IfExp
        branches = [b for b in (elt.body, elt.orelse) if not (type(b) is ast.Constant and b.value is None)]
        if not branches or not all(self._is_cell_call(b, ctx) for b in branches):
            return
        owning = [any(b is c for c in branches) and _may_own_parameters(b, ctx) for b in (elt.body, elt.orelse)]
        if not any(owning):
            return
        targets = [t for t in node.targets if type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self"]
        if not targets:
            return
        chosen = _chosen_turns(value, owner, ctx)
        if chosen is None:
            return
        attr = targets[0].attr
        read = _entries_read_in_graph(attr, used.methods, ctx)
        n = len(chosen)
        if read is None:
            looped = _constant_loop_keys(attr, used.methods, ctx)
            # a loop over constant indexes (`for j in (0, 1)`) reaches those entries (probe
            # `fix36d_cl_ifexp_none_and_one_tuple_loop`); any other read: every entry
            reached = range(n) if looped is None else sorted({k if k >= 0 else k + n for k in looped if -n <= k < n})
        elif read[1]:
            return  # an argument as the index: which entry is not known here
        else:
            reached = sorted({k if k >= 0 else k + n for k in read[0] if type(k) is int and -n <= k < n})
        # the cells owning Parameters compiled code reaches, by the branch that made them
        took = [0 if chosen[i] else 1 for i in reached if owning[0 if chosen[i] else 1]]
        if took.count(0) < 2 and took.count(1) < 2 and not (
            took.count(0) == 1 and took.count(1) == 1 and _may_clash([elt.body, elt.orelse], ctx)
        ):
            return  # at most one cell of each branch, and the two do not share names
        template = elt.body if took.count(0) >= took.count(1) else elt.orelse
        holders = took.count(0 if template is elt.body else 1)
        if holders >= 2 and ctx.mentions("name=") and _names_formatted(template, ctx) and not _may_clash([template] * 2, ctx):
            return  # Parameters named from the turn's own value (as in `_check_assign`)
        severity = _severity(attr, used, True)
        yield ctx.diagnostic(
            self,
            value,
            f"sub-cells in a plain list are not registered; `self.{attr}` holds {holders} "
            f"`{ast.unparse(template.func) if type(template) is ast.Call else 'cell'}` instances whose "
            "Parameters take the same names; keep them in an `nn.CellList` (an `nn.Identity()` where "
            "there is none) or an `nn.CellDict` by layer",
            severity=severity,
        )
        if severity == "error":
            yield from self._use_site(attr, value, used, ctx)

    def _passed_in(
        self,
        cls: ast.ClassDef,
        init: ast.AST,
        attr_params: Mapping[str, str],
        methods: Mapping[str, ast.AST],
        may_register: _MayRegister,
        ctx: Context,
    ) -> Iterable[Diagnostic]:
        """`self.models = models` in `__init__`, where the place building the Cell passes a
        plain list or tuple of cells (`Ensemble([make_cnn(4), make_cnn(6)])`, a name bound to
        one, a comprehension): the Cell holds the same plain container, and compiling a
        `construct` that calls several of its cells clashes as a display written in
        `__init__` does (measured, written/heldout19b case `r2_vis_ensemble_models_python_list`
        and probes `st22_ens_*`: "its name '0.weight' already exists"; `nn.CellList(models)`,
        one entry read by a constant index, a single cell, or cells without parameters
        compile). Only the error is reported here: the warning about unregistered
        parameters belongs to the code that builds the list."""
        if not ctx.scopes.is_cell_class(f"{ctx.scopes.info.module}.{cls.name}"):
            return
        from npu_lsp.rules.graphmode import constructed

        used: _LazyUsed | None = None
        registered: set[str] | None = None
        for attr in attr_params:
            found = constructed.sources(cls, attr, ctx)
            if not found:
                continue
            for src, where in found:
                value = constructed.built(src, where, ctx) if isinstance(src, ast.Name) else src
                if isinstance(value, (ast.List, ast.Tuple)):
                    items, comprehension = list(value.elts), False
                elif isinstance(value, ast.ListComp):
                    items, comprehension = [value.elt], True
                else:
                    continue
                cells = [_cell_built(e, ctx) for e in items]
                if not cells or any(c is None for c in cells):
                    continue
                if used is None:
                    used = _LazyUsed(methods.values(), ctx)
                    registered = _registered_entries(init, methods) if may_register(ctx) else set()
                if attr not in used or attr in (registered or ()):
                    break
                elements = [c for c in cells if c is not None]
                read = _entries_read_in_graph(attr, used.methods, ctx)
                if read is not None:
                    keys, variable = read
                    n = len(elements)
                    if comprehension:
                        picked = [elements[0]] * len(keys)
                    else:
                        picked = [e for i, e in enumerate(elements) if i in keys or i - n in keys]
                    worst = next((e for e in elements if _may_own_parameters(e, ctx)), elements[0])
                    elements = picked + [worst] * variable
                    comprehension = False
                owners = [e for e in elements if _may_own_parameters(e, ctx)]
                if not owners or not (comprehension or _may_clash(owners, ctx)):
                    continue
                kind = "tuple" if isinstance(value, ast.Tuple) else "list"
                yield ctx.diagnostic(
                    self,
                    value,
                    f"sub-cells in a plain {kind} kept as `self.{attr}` of `{cls.name}` are not registered; their parameter names clash when compiled: pass `nn.CellList(...)` or wrap it in `__init__`",
                )
                yield from self._use_site(attr, value, used, ctx)
                break

    def _grown_by_adder(
        self, cls: ast.ClassDef, init: ast.AST, methods: Mapping[str, ast.AST], may_register: _MayRegister, ctx: Context
    ) -> Iterable[Diagnostic]:
        """keras' `Sequential.add(layer)`: a method appending its argument to a plain list on
        `self` (`self.layers_list.append(layer)`), called with cells by `__init__`
        (`self.add(nn.Dense(...))`) or by the module on an instance (`model.add(...)`)
        before the network is compiled. The list then holds those cells beside the ones it
        was built with (a display, or the list the constructor was given), and they clash
        the same way when compiled code reads several of them (measured, written/heldout27b
        `seq_python_list_of_layers` and probes `fix27b_cl_*`: "its name 'weight' already
        exists" at LAX and STRICT; a ReLU or a LayerNorm added beside one Dense compiles)."""
        assert isinstance(init, ast.FunctionDef)
        adders = _adders(methods)
        if not adders:
            return
        for attr, adder in adders.items():
            before = _initial_cells(cls, init, attr, ctx)
            if before is None:
                continue
            added = _added_cells(cls, init, adder, ctx)
            if not added:
                continue
            owners_before = [e for e in before if _may_own_parameters(e, ctx)]
            if _may_clash(owners_before, ctx):
                continue  # the list as built already clashes: reported where it is built
            owners = owners_before + [e for e in added if _may_own_parameters(e, ctx)]
            if not _may_clash(owners, ctx):
                continue
            used = _LazyUsed(methods.values(), ctx)
            if attr not in used or _entries_read_in_graph(attr, used.methods, ctx) is not None:
                continue
            if may_register(ctx) and attr in _registered_entries(init, methods):
                continue
            yield from self._use_site(attr, added[0], used, ctx)

    def _sorted_cell_dict(self, init: ast.AST, methods: Mapping[str, ast.AST], ctx: Context) -> Iterable[Diagnostic]:
        """`sorted(self.encoders)` (or of `.keys()`) in compiled code, with `__init__` binding
        `self.encoders` to a plain dict of cells (a display or a comprehension; registered
        one by one or not): the dict is no constant the graph can fold, so `sorted` runs as
        Python and the graph gets a value a `for` runs no turn over. Measured (written/
        heldout27b `seq_dict_of_branches`, probes `fix27b_dc_*`): "For primitive[Concat],
        the elements size must be greater than 0, but got 0" after the loop at LAX and
        STRICT, `len(sorted(...))` fails too; a loop over the dict itself, `.keys()`,
        `list(...)`, `.items()`, and `sorted` of a dict of floats compile."""
        attrs = _cell_dict_attrs(init, ctx)
        if not attrs:
            return
        for m in methods.values():
            if ctx.scopes.scope_for(m) is None:
                continue
            for n in walk(m):
                if not (isinstance(n, ast.Call) and len(n.args) == 1 and not n.keywords and ctx.qualname(n.func) == "builtins.sorted"):
                    continue
                arg = n.args[0]
                if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "keys" and not arg.args:
                    arg = arg.func.value
                held = _self_attrs([arg])
                if held & attrs:
                    yield ctx.diagnostic(
                        self,
                        n,
                        f"`self.{next(iter(held))}` is a plain dict of sub-cells, which the graph cannot hold as a constant: `sorted` of it runs as Python and a loop over the result runs no turn (MindSpore: \"the elements size must be greater than 0, but got 0\"); keep the names in a tuple in `__init__` (`self.names = tuple(sorted(...))`) or use `nn.CellDict`",
                    )

    def _use_site(
        self, attr: str, where: ast.AST, used: _LazyUsed, ctx: Context
    ) -> Iterable[Diagnostic]:
        """The error again where compiled code first reads the attribute: MindSpore names
        that line, not `__init__`."""
        read = used.first_read(attr)
        if read is None:
            return
        s = ctx.span(where)
        yield ctx.diagnostic(
            self,
            read,
            f"`self.{attr}` holds sub-cells in a plain Python container: their parameter names clash when compiled",
            related=(Related(ctx.path, s, f"`self.{attr}` is built here"),),
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


_CONTAINER_VALUES = (ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.DictComp)
#: the same as a set of exact types (parsed nodes are never of a subclass)
_CONTAINER_TYPES = frozenset(_CONTAINER_VALUES)


def _comprehension_count(
    value: ast.ListComp | ast.DictComp, owner: tuple[ast.ClassDef, ast.AST], ctx: Context
) -> int | None:
    """How many items `[<cell> for i in range(n)]` (or over a tuple, or a dict's items) in
    `__init__` makes, when every instance built in this file gives the same count (the
    constructor's arguments or their defaults: `range(len(chs) - 1)` with `chs=(3, 8)` is
    one); None when unknown."""
    if len(value.generators) != 1 or value.generators[0].ifs:
        return None
    return _iter_count(value.generators[0].iter, owner, ctx)


def _loop_count(st: ast.stmt, owner: tuple[ast.ClassDef, ast.AST], ctx: Context) -> int | None:
    """Turns of `st` when it is a `for` of `__init__` whose count `_iter_count` knows (the
    loop appending or storing cells: `for _ in range(channels)` with `channels=1`, `for name,
    size in sizes.items()` with one key); 1 for a statement that is no loop; None else."""
    if type(st) is ast.For:
        if st.orelse or any(type(n) in (ast.Break, ast.Continue) for n in walk(st)):
            return None
        return _iter_count(st.iter, owner, ctx)
    return None if type(st) is ast.While else 1


def _iter_count(it: ast.expr, owner: tuple[ast.ClassDef, ast.AST], ctx: Context) -> int | None:
    """Items of the iterable `it` of `__init__` when every instance built in this file gives
    the same count: `range(...)` of numbers the constructor's arguments fix, a tuple, a dict
    display passed for an argument (`.items()`, `.keys()`, `.values()`, `enumerate(...)` of
    it); None when unknown."""
    cls, init = owner
    if not isinstance(init, ast.FunctionDef):
        return None
    inst = instances(ctx)

    def number(e: ast.expr) -> object:
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id == "len"
            and len(e.args) == 1
            and not e.keywords
            and ctx.qualname(e.func) == "builtins.len"
        ):
            return _iter_count(e.args[0], owner, ctx)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
            left, right = number(e.left), number(e.right)
            if type(left) is int and type(right) is int:
                return left + right if isinstance(e.op, ast.Add) else left - right
            return None
        return inst.init_value(e, cls, init)

    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords:
        if ctx.qualname(it.func) != "builtins.range" or not 1 <= len(it.args) <= 3:
            return None
        bounds = [b for b in (number(a) for a in it.args) if type(b) is int]
        if len(bounds) != len(it.args) or (len(bounds) == 3 and bounds[2] == 0):
            return None
        return len(range(*bounds))
    if type(it) is ast.Call and not it.keywords:
        f = it.func
        if type(f) is ast.Attribute and f.attr in ("items", "keys", "values") and not it.args:
            it = f.value  # the same count as the dict itself
        elif type(f) is ast.Name and f.id == "enumerate" and len(it.args) == 1 and ctx.qualname(f) == "builtins.enumerate":
            it = it.args[0]
    seq = inst.init_value(it, cls, init)
    if isinstance(seq, tuple):
        return len(seq)
    return _dict_argument_count(it, cls, init, ctx)


def _dict_argument_count(it: ast.expr, cls: ast.ClassDef, init: ast.FunctionDef, ctx: Context) -> int | None:
    """`it` a parameter of `cls`'s `__init__` that every construction of this file passes
    as a dict display with constant keys (`VSN({"target": 3}, 4)`), or as a module-level
    name bound once to one, of one size: that size; None otherwise."""
    if type(it) is not ast.Name:
        return None
    inst = instances(ctx)
    binds = inst.bindings_of(init).get(it.id, [])
    if len(binds) != 1 or not isinstance(binds[0], ast.arg) or inst.subclasses(cls):
        return None
    sites = inst.instantiations(cls.name)
    positional = [p.arg for p in (*init.args.posonlyargs, *init.args.args)][1:]
    sizes: set[int] = set()
    for site in sites[:8]:
        if any(isinstance(x, ast.Starred) for x in site.args) or any(k.arg is None for k in site.keywords):
            return None
        given = _argument(site, it.id, positional)
        if type(given) is ast.Name:
            top = ctx.module_bindings().get(given.id, [])
            if len(top) != 1 or type(top[0]) is not ast.Assign or len(top[0].targets) != 1:
                return None
            given = top[0].value
        if type(given) is not ast.Dict or not all(type(k) is ast.Constant for k in given.keys):
            return None
        sizes.add(len({k.value for k in given.keys if type(k) is ast.Constant}))
    return sizes.pop() if len(sizes) == 1 else None


def _constant_loop_keys(attr: str, methods: Iterable[ast.AST], ctx: Context) -> set[int] | None:
    """The indexes compiled code reads `self.<attr>` with when every read is `self.<attr>[k]`,
    `k` an int constant or the target of a `for` over a tuple or list of int constants that
    the loop does not rebind; None otherwise."""
    keys: set[int] = set()
    for m in methods:
        if ctx.scopes.scope_for(m) is None:
            continue
        for n in walk(m):
            if not (type(n) is ast.Attribute and n.attr == attr and type(n.value) is ast.Name and n.value.id == "self"):
                continue
            up = ctx.parent(n)
            if type(up) is not ast.Subscript or up.value is not n:
                return None
            key = _folded_key(up.slice)
            if type(key) is ast.Constant and type(key.value) is int:
                keys.add(key.value)
                continue
            if type(key) is not ast.Name:
                return None
            loop = _loop_binding(key, m, ctx)
            if loop is None or type(loop.iter) not in (ast.Tuple, ast.List):
                return None
            items = loop.iter.elts  # type: ignore[attr-defined]
            if not all(type(x) is ast.Constant and type(x.value) is int for x in items):
                return None
            keys.update(x.value for x in items)
    return keys


def _loop_binding(key: ast.Name, method: ast.AST, ctx: Context) -> ast.For | None:
    """The `for key in ...` around the read `key` whose target is that bare name, when
    nothing else in `method` binds it."""
    p = ctx.parent(key)
    while p is not None and p is not method:
        if type(p) is ast.For and type(p.target) is ast.Name and p.target.id == key.id:
            stores = [
                x for x in walk(method) if type(x) is ast.Name and x.id == key.id and type(x.ctx) is not ast.Load
            ]
            return p if len(stores) == 1 else None
        p = ctx.parent(p)
    return None


def _chosen_turns(value: ast.ListComp, owner: tuple[ast.ClassDef, ast.AST], ctx: Context) -> list[bool] | None:
    """For `[A if <test> else B for i in range(n)]` in `__init__`: per turn, does the test take
    `A`? Known when `n` is (`_comprehension_count`) and the test reads only `i`, numbers and
    names every instance built in the file gives one value (`i in layers` with
    `layers=(1, 3)`, `i % 2 == 1`, `i == depth - 1`); None otherwise."""
    elt = value.elt
    if type(elt) is not ast.IfExp or len(value.generators) != 1:
        return None
    gen = value.generators[0]
    it = gen.iter
    if type(gen.target) is not ast.Name or not (type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "range"):
        return None
    count = _comprehension_count(value, owner, ctx)
    if count is None or count > 64:
        return None
    cls, init = owner
    if type(init) is not ast.FunctionDef:
        return None
    inst = instances(ctx)
    start = 0
    if len(it.args) >= 2:
        first = inst.init_value(it.args[0], cls, init)
        if type(first) is not int:
            return None
        start = first
    step = 1
    if len(it.args) == 3:
        third = inst.init_value(it.args[2], cls, init)
        if type(third) is not int or third == 0:
            return None
        step = third
    loop = gen.target.id
    chosen: list[bool] = []
    for turn in range(count):
        got = _evaluated(elt.test, loop, start + turn * step, lambda e: inst.init_value(e, cls, init))
        if type(got) is not bool:
            return None
        chosen.append(got)
    return chosen


def _evaluated(e: ast.expr, loop: str, i: int, init_value: Callable[[ast.expr], object]) -> object:
    """`e` with the loop variable `loop` at `i` (other names: their `__init__` values), for
    comparisons, `in`, `not`, `and`/`or` and integer arithmetic; None when not known."""
    t = type(e)
    if t is ast.Name:
        assert isinstance(e, ast.Name)
        if e.id == loop:
            return i
        v = init_value(e)
        return v if type(v) in (int, bool, tuple) else None
    if t is ast.Constant:
        assert isinstance(e, ast.Constant)
        return e.value if type(e.value) in (int, bool) else None
    if t is ast.Tuple or t is ast.List:
        assert isinstance(e, (ast.Tuple, ast.List))
        items = tuple(_evaluated(x, loop, i, init_value) for x in e.elts)
        return items if all(type(x) is int for x in items) else None
    if t is ast.UnaryOp:
        assert isinstance(e, ast.UnaryOp)
        v = _evaluated(e.operand, loop, i, init_value)
        if type(e.op) is ast.Not and type(v) is bool:
            return not v
        if type(e.op) is ast.USub and type(v) is int:
            return -v
        return None
    if t is ast.BinOp:
        assert isinstance(e, ast.BinOp)
        a, b = _evaluated(e.left, loop, i, init_value), _evaluated(e.right, loop, i, init_value)
        if type(a) is not int or type(b) is not int:
            return None
        op = type(e.op)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op in (ast.Mod, ast.FloorDiv) and b != 0:
            return a % b if op is ast.Mod else a // b
        return None
    if t is ast.BoolOp:
        assert isinstance(e, ast.BoolOp)
        vals = [_evaluated(x, loop, i, init_value) for x in e.values]
        if not all(type(v) is bool for v in vals):
            return None
        return all(vals) if type(e.op) is ast.And else any(vals)
    if t is ast.Compare:
        assert isinstance(e, ast.Compare)
        left = _evaluated(e.left, loop, i, init_value)
        for cmp, right_e in zip(e.ops, e.comparators, strict=True):
            right = _evaluated(right_e, loop, i, init_value)
            got = _compared(left, type(cmp), right)
            if got is not True:
                return got
            left = right
        return True
    return None


def _compared(a: object, op: type[ast.cmpop], b: object) -> bool | None:
    if op in (ast.In, ast.NotIn):
        if type(a) is not int or type(b) is not tuple:
            return None
        return (a in b) == (op is ast.In)
    if type(a) is not int or type(b) is not int:
        return None
    table = {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}
    return table.get(op)


def _assigns_containers(body: list[ast.stmt], dict_calls: bool) -> bool:
    """Does `__init__` assign a list, tuple or dict display (or comprehension) anywhere at its
    top level, `tuple(<generator>)`, or `dict()`? Every finding starts at such an assignment (`self.x = []` for
    appends, `self.x = {}` / `dict()` for item stores)."""
    for st in body:  # (a loop, not a generator)
        if type(st) is ast.Assign:
            v = st.value
            if type(v) in _CONTAINER_TYPES:
                return True
            if type(v) is ast.Call and type(v.func) is ast.Name:
                if dict_calls and v.func.id == "dict" and not v.args:
                    return True  # `dict()` (keywords ruled out by `_empty_dict` later)
                if v.func.id in ("tuple", "list") and len(v.args) == 1 and type(v.args[0]) is ast.GeneratorExp:
                    return True  # `tuple(Block() for _ in range(n))`
    return False


class _MayRegister:
    """Cheap text test, once per file: can it register a child cell by name at all?"""

    def __init__(self) -> None:
        self._value: bool | None = None

    def __call__(self, ctx: Context) -> bool:
        if self._value is None:
            self._value = ctx.mentions("setattr") or ctx.mentions("_cells") or ctx.mentions("insert_child_to_cell")
        return self._value


def _empty_dict(e: ast.expr) -> bool:
    """`{}` or `dict()`."""
    if isinstance(e, ast.Dict):
        return not e.keys
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id == "dict"
        and not e.args
        and not e.keywords
    )


def _registration_value(call: ast.AST) -> ast.expr | None:
    """The cell a statement registers as a named child of `self`:
    `self.insert_child_to_cell(name, cell)`, `setattr(self, name, cell)`,
    `self.__setattr__(name, cell)` (each goes through `Cell.__setattr__` /
    `insert_child_to_cell` into `self._cells`); `self._cells[name] = cell` is handled by
    the caller. `object.__setattr__` bypasses the registration and does not count."""
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    f = call.func
    if isinstance(f, ast.Name) and f.id == "setattr" and len(call.args) == 3:
        target = call.args[0]
        if isinstance(target, ast.Name) and target.id == "self":
            return call.args[2]
        return None
    if (
        isinstance(f, ast.Attribute)
        and f.attr in ("insert_child_to_cell", "__setattr__")
        and isinstance(f.value, ast.Name)
        and f.value.id == "self"
        and len(call.args) == 2
    ):
        return call.args[1]
    return None


def _registered_entries(init: ast.AST, methods: Mapping[str, ast.AST] | None = None) -> set[str]:
    """`self` attributes of `__init__` whose entries are registered one by one as child cells
    inside a loop (or comprehension) over them: `for i, h in enumerate(self.heads):
    self.insert_child_to_cell(f"h{i}", h)` (pyGAT's `add_module` loop), `setattr(self, name,
    h)`, `self._cells[name] = h`, `...(name, self.heads[i])`. `Cell.check_names_and_refresh_name`
    renames the parameters of every registered child uniquely before compiling, so the list
    compiles (measured: written/heldout18a `r2_gnn_gat_multihead_concat_list_heads` and probes
    `fe18a_rg_*`). Also such a loop in a method of the class `__init__` calls on `self`
    (`self._init_network()` looping `for name, layer in self.layers.items():
    self.insert_child_to_cell(name, layer)`: mindspore-ai/models I3D, written/zoo14 probes
    `z19_reg_*`)."""
    out: set[str] = set()
    # each body with its parameters that name a `self` attribute (`self._reg(self.layers)`)
    bodies: list[tuple[ast.AST, dict[str, str]]] = [(init, {})]
    if methods:
        for c in ast.walk(init):
            if (
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute)
                and _is_self_attr(c.func)
                and c.func.attr != "__init__"
            ):
                m = methods.get(c.func.attr)
                if isinstance(m, ast.FunctionDef) and m is not init:
                    params = [a.arg for a in m.args.args[1:]]
                    given = {
                        p: a.attr
                        for p, a in zip(params, c.args, strict=False)
                        if isinstance(a, ast.Attribute) and _is_self_attr(a)
                    }
                    bodies.append((m, given))
    for body_of, given in bodies:
        out |= _registered_in(body_of, given)
    return out


def _registered_in(init: ast.AST, given: dict[str, str]) -> set[str]:
    """`_registered_entries` of one body; `given`: its parameters holding `self` attributes."""
    out: set[str] = set()
    for loop in ast.walk(init):
        body: list[ast.AST]
        if isinstance(loop, ast.For):
            over = {a.attr for a in ast.walk(loop.iter) if _is_self_attr(a)}  # type: ignore[attr-defined]
            over |= {given[n.id] for n in ast.walk(loop.iter) if isinstance(n, ast.Name) and n.id in given}
            loop_vars = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
            body = list(loop.body)
        elif isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            over = {a.attr for g in loop.generators for a in ast.walk(g.iter) if _is_self_attr(a)}  # type: ignore[attr-defined]
            loop_vars = {n.id for g in loop.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            body = [loop.elt]
        else:
            continue
        for top in body:
            for n in ast.walk(top):
                value = _registration_value(n)
                if (
                    value is None
                    and isinstance(n, ast.Assign)
                    and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Subscript)
                    and _is_self_attr(n.targets[0].value, "_cells")
                ):
                    value = n.value
                if value is None:
                    continue
                for m in ast.walk(value):
                    if _is_self_attr(m):
                        out.add(m.attr)  # type: ignore[attr-defined]
                    elif isinstance(m, ast.Name) and m.id in loop_vars:
                        out.update(over)
    return out


def _is_self_attr(n: ast.AST, attr: str | None = None) -> bool:
    return (
        isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and (attr is None or n.attr == attr)
    )


def _wrapped_later(body: list[ast.stmt]) -> dict[int, set[str]]:
    """Statement index -> the `self` attributes it assigns that a later statement of
    `__init__` rebinds to something other than a list or tuple (typically
    `self.blocks = nn.CellList(self.blocks)`): the list never reaches compiled code."""
    out: dict[int, set[str]] = {}
    later: set[str] = set()
    for i in range(len(body) - 1, -1, -1):
        st = body[i]
        if isinstance(st, ast.Assign):
            attrs = _self_attrs(st.targets)
            out[i] = attrs & later
            if not isinstance(st.value, (ast.List, ast.Tuple, ast.ListComp)):
                later |= attrs
    return out


def _cell_dict_attrs(init: ast.AST, ctx: Context) -> set[str]:
    """The attributes `__init__` binds (once) to a dict display or comprehension of cells."""
    out: set[str] = set()
    seen: set[str] = set()
    for st in walk(init):
        if not isinstance(st, ast.Assign):
            continue
        for attr in _self_attrs(st.targets):
            if attr in seen:
                out.discard(attr)
                continue
            seen.add(attr)
            v = st.value
            values = v.values if isinstance(v, ast.Dict) else [v.value] if isinstance(v, ast.DictComp) else []
            if values and all(v is not None and _cell_built(v, ctx) is not None for v in values):
                out.add(attr)
    return out


def _spans_any(cls: ast.ClassDef, lines: list[int]) -> bool:
    """Does the class hold one of these lines (`self.<x>.append(`)? Most classes do not."""
    end = cls.end_lineno or cls.lineno
    return any(cls.lineno <= line <= end for line in lines)


def _self_append_lines(ctx: Context) -> list[int]:
    """The lines of the text holding `self.<name>.append(`, once per file."""
    hit: list[int] | None = ctx.cache.get("MS126.append_lines")
    if hit is None:
        hit = []
        text = ctx.text
        i = text.find(".append(")
        line, at = 1, 0
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            if "self." in text[start:i]:
                line += text.count("\n", at, i)  # counted on from the last hit
                at = i
                hit.append(line)
            i = text.find(".append(", i + 1)
        ctx.cache["MS126.append_lines"] = hit
    return hit


def _adders(methods: Mapping[str, ast.AST]) -> dict[str, tuple[str, int]]:
    """The methods (other than `__init__`) whose body appends one of their parameters to a
    list on `self` (`def add(self, layer): self.layers_list.append(layer)`), by that list's
    attribute name: (the method's name, the parameter's position after `self`)."""
    out: dict[str, tuple[str, int]] = {}
    for name, m in methods.items():
        if name == "__init__" or not isinstance(m, ast.FunctionDef):
            continue
        params = [a.arg for a in (*m.args.posonlyargs, *m.args.args)][1:]
        for st in m.body:
            call = st.value if isinstance(st, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"):
                continue
            attrs = _self_attrs([call.func.value])
            arg = call.args[0] if len(call.args) == 1 else None
            if attrs and isinstance(arg, ast.Name) and arg.id in params:
                out[next(iter(attrs))] = (name, params.index(arg.id))
    return out


def _initial_cells(cls: ast.ClassDef, init: ast.FunctionDef, attr: str, ctx: Context) -> list[ast.expr] | None:
    """The cells the plain list `self.<attr>` holds when `__init__` binds it: a display
    (empty too) of cell constructions, or the list every place building `cls` passes for
    the parameter it is bound to; None when not known."""
    from npu_lsp.rules.graphmode import constructed

    binds = [st for st in walk(init) if isinstance(st, ast.Assign) and attr in _self_attrs(st.targets)]
    if len(binds) != 1 or binds[0] not in init.body:
        return None
    value = binds[0].value
    if isinstance(value, ast.List):
        groups: list[list[ast.expr]] = [list(value.elts)]
    elif isinstance(value, ast.Name):
        found = constructed.sources(cls, attr, ctx) or []
        groups = []
        for src, where in found:
            built = constructed.built(src, where, ctx) if isinstance(src, ast.Name) else src
            if not isinstance(built, ast.List):
                return None
            groups.append(list(built.elts))
        if not groups:
            return None
    else:
        return None
    lists: list[list[ast.expr]] = []
    for group in groups:
        cells = [_cell_built(e, ctx) for e in group]
        if any(c is None for c in cells):
            return None
        lists.append([c for c in cells if c is not None])
    # the places building `cls` each make their own list: the longest counts
    return max(lists, key=len)


def _added_cells(cls: ast.ClassDef, init: ast.FunctionDef, adder: tuple[str, int], ctx: Context) -> list[ast.expr]:
    """The cells given to the adder method: `self.add(nn.Dense(...))` in `__init__`, or
    `model.add(...)` on a module-level name bound to `cls(...)`; one in a loop counts twice."""
    name, index = adder
    out: list[ast.expr] = []
    q = f"{ctx.scopes.info.module}.{cls.name}"
    instances = {n for n, target in ctx.scopes.info.instances.items() if target == q}
    for n in walk(ctx.tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name):
            continue
        recv = n.func.value
        if not isinstance(recv, ast.Name):
            continue
        inside = init.lineno <= n.lineno <= (init.end_lineno or init.lineno)
        if not ((recv.id == "self" and inside) or (recv.id in instances and not _in_function(n, ctx))):
            continue
        given = n.args[index] if index < len(n.args) else None
        cell = _cell_built(given, ctx) if given is not None else None
        if cell is None:
            continue
        out.append(cell)
        if _in_loop(n, ctx):
            out.append(cell)
    return out


def _in_function(node: ast.AST, ctx: Context) -> bool:
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        p = ctx.parent(p)
    return p is not None


def _in_loop(node: ast.AST, ctx: Context) -> bool:
    p = ctx.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if isinstance(p, (ast.For, ast.While, ast.comprehension)):
            return True
        p = ctx.parent(p)
    return False


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
        self._value: dict[str, ast.Attribute] | None = None

    def _reads(self) -> dict[str, ast.Attribute]:
        if self._value is None:
            self._value = _attrs_used_in_graph(self._methods, self._ctx)
        return self._value

    @property
    def methods(self) -> Iterable[ast.AST]:
        return self._methods

    def __contains__(self, attr: object) -> bool:
        return attr in self._reads()

    def first_read(self, attr: str) -> ast.Attribute | None:
        return self._reads().get(attr)


def _attrs_used_in_graph(methods: Iterable[ast.AST], ctx: Context) -> dict[str, ast.Attribute]:
    """`self.<attr>` names read by the compiled methods of a class, each with its first read."""
    out: dict[str, ast.Attribute] = {}
    for m in methods:
        if ctx.scopes.scope_for(m) is None:
            continue
        for n in walk(m):
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and n.value.id == "self"
            ):
                seen = out.get(n.attr)
                if seen is None or (n.lineno, n.col_offset) < (seen.lineno, seen.col_offset):
                    out[n.attr] = n
    return out


def _entries_read_in_graph(
    attr: str, methods: Iterable[ast.AST], ctx: Context
) -> tuple[set[object], int] | None:
    """The constant keys compiled code reads from `self.<attr>` (`self.heads["cls"]`,
    `self.paths[1]`) and how many reads use an argument of the compiled method as the key
    (`self.branches[modality]`, outside any loop: one entry each), or None when it reads the
    attribute any other way (iterates it, passes it on, a key that changes in a loop): then
    every entry may be reached."""
    reads: list[tuple[ast.expr, ast.AST]] = [
        (n, m)
        for m in methods
        if ctx.scopes.scope_for(m) is not None
        for n in walk(m)
        if isinstance(n, ast.Attribute)
        and n.attr == attr
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
    ]
    return _entries_of(reads, ctx)


def _module_name_reads(name: str, tree: ast.Module, ctx: Context) -> list[tuple[ast.Name, ast.AST]]:
    """Reads of the module-level `name` in compiled functions, each with its function."""
    out: list[tuple[ast.Name, ast.AST]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.scopes.scope_for(fn) is None:
            continue
        a = fn.args
        if name in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
            continue
        names = [n for n in walk(fn) if isinstance(n, ast.Name) and n.id == name]
        if any(not isinstance(n.ctx, ast.Load) for n in names):
            continue  # a local of the same name
        out.extend((n, fn) for n in names)
    return out


def _entries_of(reads: Sequence[tuple[ast.expr, ast.AST]], ctx: Context) -> tuple[set[object], int] | None:
    """The constant keys of these reads (each with the compiled function it is in) and how
    many use an argument of that function as the key; None when one is read otherwise."""
    keys: set[object] = set()
    variable = 0
    attr_keys: set[str] = set()  # `self.heads[self.head]`: one entry per attribute named
    for n, fn in reads:
        up = ctx.parent(n)
        if _membership_test(n, up):
            continue  # `tenant in self.adapters` reads the keys, brings no cell in
        if isinstance(up, ast.Subscript) and up.value is n:
            key = _folded_key(up.slice)
        else:
            got = _get_key(n, up, ctx)
            if got is None:
                return None
            up, key = got
        if isinstance(key, ast.Constant) and not isinstance(key.value, bool):
            keys.add(key.value)
        elif _argument_key(key, fn, up, ctx):
            variable += 1
        elif (attr := _constant_attribute_key(key, fn, ctx)) is not None:
            attr_keys.add(attr)
        else:
            return None
    return keys, variable + len(attr_keys)


def _membership_test(n: ast.expr, up: ast.AST | None) -> bool:
    """`key in d` / `key not in d`: the graph tests the constant keys only."""
    return (
        isinstance(up, ast.Compare)
        and len(up.ops) == 1
        and isinstance(up.ops[0], (ast.In, ast.NotIn))
        and up.comparators[0] is n
    )


def _get_key(n: ast.expr, up: ast.AST | None, ctx: Context) -> tuple[ast.Call, ast.expr] | None:
    """`d.get(key)` / `d.get(key, default)`: one entry, as `d[key]` (the call and its key);
    measured (written/heldout16b probes `fe_cd_get_*`) like the subscripts."""
    if not (isinstance(up, ast.Attribute) and up.attr == "get"):
        return None
    call = ctx.parent(up)
    if not (isinstance(call, ast.Call) and call.func is up and 1 <= len(call.args) <= 2 and not call.keywords):
        return None
    return call, call.args[0]


def _folded_key(key: ast.expr) -> ast.expr:
    """`-1` as the constant it is (`self.paths[-1]`); any other key unchanged."""
    if (
        isinstance(key, ast.UnaryOp)
        and isinstance(key.op, ast.USub)
        and isinstance(key.operand, ast.Constant)
        and type(key.operand.value) is int
    ):
        return ast.Constant(-key.operand.value)
    return key


def _argument_key(key: ast.expr, method: ast.AST, read: ast.AST, ctx: Context) -> bool:
    """Is `key` a parameter of `method` that the method never rebinds, read outside any loop?"""
    if not (isinstance(key, ast.Name) and isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return False
    a = method.args
    if key.id not in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
        return False
    for n in walk(method):
        if isinstance(n, ast.Name) and n.id == key.id and not isinstance(n.ctx, ast.Load):
            return False
    node: ast.AST | None = ctx.parent(read)
    while node is not None and node is not method:
        if isinstance(node, (ast.For, ast.While, ast.comprehension, ast.ListComp, ast.DictComp,
                             ast.SetComp, ast.GeneratorExp, ast.Lambda, ast.FunctionDef)):
            return False
        node = ctx.parent(node)
    return True


def _constant_attribute_key(key: ast.expr, method: ast.AST, ctx: Context) -> str | None:
    """The attribute name of a key `self.<name>` that holds a value known while compiling (a
    string or int `__init__` stored: `self.heads[self.head](x)` with `self.head = head`) and
    that the compiled method never stores; else None. The graph holds such an attribute as a
    constant, so the read brings one entry in, as a constant key does, and every read naming
    the same attribute (twice, or in a loop) brings that same entry (measured, written/
    heldout30a case `container_plain_dict_of_cells_attr` and probes `fix30e_cd_*`: all
    compile at both levels; two attributes naming two Dense entries clash)."""
    from npu_lsp.rules.graphmode.flow import Kind, analyzer

    if not (isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) and key.value.id == "self"):
        return None
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for n in walk(method):
        if isinstance(n, ast.Attribute) and n.attr == key.attr and not isinstance(n.ctx, ast.Load):
            return None  # stored by compiled code: not the value `__init__` left
    if analyzer(ctx).kind(key, method) != Kind.CONST:
        return None
    return key.attr


#: `mindspore.nn` cells that own no Parameter: several of them in a list cannot clash
#: every Parameter name (first dotted part) a `mindspore.nn` layer may create, by layer
_POSSIBLE_NAMES: dict[str, frozenset[str]] = {
    layer: frozenset(names)
    for layer, names in json.loads(
        Path(__file__).with_name("ms_layer_parameters.json").read_text(encoding="utf-8")
    )["possible"].items()
}
_PARAMETER_FREE = frozenset(
    {
        "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "CELU",
        "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Dropout", "Dropout1d", "Dropout2d",
        "Dropout3d", "ELU", "FastGelu", "Flatten", "GELU", "GLU", "HShrink", "HSigmoid",
        "HSwish", "Hardtanh", "Identity", "LeakyReLU", "LogSigmoid", "LogSoftmax", "LPPool1d",
        "LPPool2d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "Mish", "Pad", "RReLU", "ReLU",
        "ReLU6", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
        "ReplicationPad2d", "ReplicationPad3d", "SeLU", "SiLU", "Sigmoid", "SoftShrink",
        "Softmax", "Softmax2d", "Softmin", "Softsign", "Tanh", "Tanhshrink", "Threshold",
        "Unflatten", "Unfold", "Upsample", "ZeroPad2d",
    }
)  # fmt: skip


def _cell_built(e: ast.expr, ctx: Context) -> ast.expr | None:
    """The cell constructor call `e` stands for: `e` itself, or the only value returned by a
    module-level function `e` calls (`make_cnn(4)` with `return nn.SequentialCell(...)`)."""
    if CellsInPythonList._is_cell_call(e, ctx):
        return e
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name)):
        return None
    fn = next(
        (st for st in ctx.tree.body if isinstance(st, ast.FunctionDef) and st.name == e.func.id), None
    )
    if fn is None:
        return None
    rets = [n for n in walk(fn) if isinstance(n, ast.Return)]
    if len(rets) != 1 or rets[0].value is None or not CellsInPythonList._is_cell_call(rets[0].value, ctx):
        return None
    return rets[0].value


def _may_own_parameters(e: ast.expr, ctx: Context) -> bool:
    """False only for a call of a `mindspore.nn` cell known to have no parameters, or of a
    Cell class of this file that, with its sub-cells, owns none (`_possible_names` empty:
    `Scale(0.5)` storing only the number, `MovingAvg(k)` holding an `nn.AvgPool1d`)."""
    q = ctx.qualname(e.func) if isinstance(e, ast.Call) else None
    if not q:
        return True
    if not q.startswith("mindspore."):
        # measured (written/heldout34a probes `fix34e_ncp_*`): two instances of such a class
        # in a plain list or comprehension compile at LAX and STRICT; a Parameter built or
        # given, or a Dense inside, clashes
        return not (ctx.scopes.is_cell_class(q) and _possible_names(e, ctx) == frozenset())
    if not q.startswith("mindspore.nn."):
        return True
    name = q.rsplit(".", 1)[-1]
    return not (name in _PARAMETER_FREE or name.endswith("Loss"))  # nn losses own no Parameter


def _sequence_of_generator(value: ast.expr, ctx: Context) -> ast.GeneratorExp | ast.ListComp | None:
    """The comprehension of `tuple(<gen>)` / `list(<gen>)` (the builtins), else None."""
    call = builtin_sequence_call(value, ctx)
    arg = call.args[0] if call is not None else None
    return arg if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) else None


def _may_clash(owners: list[ast.expr], ctx: Context) -> bool:
    """May two of these cells give their Parameters one name? Unregistered, each keeps the
    names it has on its own, so cells whose possible names are disjoint never clash
    (measured, written/heldout23b `r2_plain_dict_distinct_params`: a plain dict of a
    LayerNorm (gamma, beta) and a Dense (weight, bias) compiles; two Dense clash on
    'weight'; written/heldout32b: two classes of the file storing `fc` / `fc1`, `lin` /
    `proj`, or `body` holding a Block (`body.fc.weight`) beside `body` holding a Dense
    (`body.weight`) compile, `lin` twice clashes). Cells not known may."""
    if len(owners) < 2:
        return False
    seen: set[str] = set()
    for turn, e in enumerate(owners):
        names = _possible_names(e, ctx, turn)
        if names is None or any(_name_clash(n, m) for n in names for m in seen):
            return True
        seen.update(names)
    return False


def _name_clash(a: str, b: str) -> bool:
    """May a Parameter named by pattern `a` be named as one of `b`? A pattern stands for
    itself and every name below it (`fc` for `fc.weight`); an `_ANY_INDEX` part stands for
    any index of a container built by a comprehension."""
    if _ANY_INDEX in a or _ANY_INDEX in b:
        pa, pb = a.split("."), b.split(".")
        return all(x == y or (x == _ANY_INDEX and y.isdigit()) or (y == _ANY_INDEX and x.isdigit()) for x, y in zip(pa, pb, strict=False))
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


#: in a name pattern, the index of an entry of a `SequentialCell` / `CellList` built from a
#: comprehension (`0`, `1`, ...: which one is not followed)
_ANY_INDEX = "\x02"

#: `mindspore.nn` containers that name their entries' Parameters `<key>.` + their path
_CONTAINERS = frozenset({"SequentialCell", "CellList", "CellDict"})


def _container_names(call: ast.Call, ctx: Context, depth: int) -> frozenset[str] | None:
    """Name patterns of the Parameters of an `nn.SequentialCell` / `nn.CellList` /
    `nn.CellDict` built by `call`, unregistered: each entry's Parameters are renamed
    `<key>.` + their path in the entry (`update_parameters_name` in mindspore/nn/layer/
    container.py, 2.10): the index for a list or for several cells given one by one,
    `0` for a single cell, the key of an `OrderedDict` or of a `CellDict`'s dict. Measured
    (written/heldout38d probes `fix38d_sq_*`): a plain dict holding `SequentialCell([Dense])`
    (`0.weight`) beside a bare `Dense` (`weight`), `SequentialCell([ReLU(), Dense])`
    (`1.weight`), `OrderedDict` keys `fc` / `proj`, a nested `SequentialCell` (`0.0.weight`)
    compile; two `SequentialCell([Dense])` or two `CellList([Dense])` clash on `0.weight`.
    None when an entry or the layout is not known (`auto_prefix=False` included)."""
    layer = (ctx.qualname(call.func) or "").rsplit(".", 1)[-1]
    if depth > 4 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None  # `auto_prefix=False` keeps the entries' own names
    entries: list[tuple[str, ast.expr]] | None
    if layer == "SequentialCell" and len(call.args) > 1:
        entries = [(str(i), a) for i, a in enumerate(call.args)]
    elif len(call.args) != 1:
        return frozenset() if not call.args else None
    else:
        entries = _keyed_entries(call.args[0], layer, ctx)
    if entries is None:
        return None
    out: set[str] = set()
    for key, e in entries:
        inner = _entry_names(e, ctx, depth + 1)
        if inner is None:
            return None
        out.update(f"{key}.{n}" for n in inner)
    return frozenset(out)


def _keyed_entries(arg: ast.expr, layer: str, ctx: Context) -> list[tuple[str, ast.expr]] | None:
    """(key, cell) of the one argument of a container `layer`: a list display (indices), a
    list comprehension (`_ANY_INDEX`), an `OrderedDict` / dict display of string keys, or a
    single cell given to a `SequentialCell` (index 0)."""
    if isinstance(arg, ast.List) and layer != "CellDict":
        return [(str(i), e) for i, e in enumerate(arg.elts)]
    if isinstance(arg, ast.ListComp) and layer != "CellDict" and len(arg.generators) == 1:
        return [(_ANY_INDEX, arg.elt)]
    pairs: list[tuple[ast.expr | None, ast.expr]] | None = None
    if isinstance(arg, ast.Dict) and layer == "CellDict":
        pairs = list(zip(arg.keys, arg.values, strict=True))
    elif isinstance(arg, ast.Call) and (ctx.qualname(arg.func) or "").endswith("OrderedDict") and layer != "CellList":
        inner = arg.args[0] if len(arg.args) == 1 and not arg.keywords else None
        items = inner.elts if isinstance(inner, (ast.List, ast.Tuple)) else None
        if items is None or not all(isinstance(x, ast.Tuple) and len(x.elts) == 2 for x in items):
            return None
        pairs = [(x.elts[0], x.elts[1]) for x in items if isinstance(x, ast.Tuple)]
    elif isinstance(arg, ast.Call) and layer == "SequentialCell" and CellsInPythonList._is_cell_call(arg, ctx):
        return [("0", arg)]
    if pairs is None:
        return None
    out: list[tuple[str, ast.expr]] = []
    for k, v in pairs:
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None
        out.append((k.value, v))
    return out


def _entry_names(e: ast.expr, ctx: Context, depth: int) -> frozenset[str] | None:
    """Path names of the Parameters of the cell `e` builds, held inside a container (a
    Parameter's own `name=` is replaced by its path there)."""
    q = ctx.qualname(e.func) if isinstance(e, ast.Call) else None
    if not q or not isinstance(e, ast.Call):
        return None
    if q.startswith("mindspore.nn."):
        layer = q.rsplit(".", 1)[-1]
        if layer in _PARAMETER_FREE:
            return frozenset()
        if layer in _CONTAINERS:
            return _container_names(e, ctx, depth)
        return _POSSIBLE_NAMES.get(layer)
    if q.startswith("mindspore.") or not ctx.scopes.is_cell_class(q):
        return None
    return _class_parameter_names(q, ctx, depth, top=False)


def _possible_names(e: ast.expr, ctx: Context, turn: int = 0) -> frozenset[str] | None:
    """Patterns (`_name_clash`) of every Parameter name the cell `e` builds may have,
    unregistered (None: not known): a `mindspore.nn` layer's from the measured table; a
    Cell class of this file's from what it stores on `self` (`_class_parameter_names`),
    names formatted from its `__init__` arguments resolved at `e` (`_resolved_names`;
    `turn`: which of the compared owners `e` is)."""
    q = ctx.qualname(e.func) if isinstance(e, ast.Call) else None
    if not q:
        return None
    if q.startswith("mindspore.nn."):
        layer = q.rsplit(".", 1)[-1]
        if layer in _CONTAINERS and isinstance(e, ast.Call):
            return _container_names(e, ctx, 0)
        return _POSSIBLE_NAMES.get(layer)
    key = f"MS126-names:{q}"
    if key not in ctx.cache:
        ctx.cache[key] = _class_parameter_names(q, ctx, 0, top=True)
    names: frozenset[str] | None = ctx.cache[key]
    if names is not None and any(_HOLE in n for n in names):
        return _resolved_names(names, e, q, ctx, turn)  # type: ignore[arg-type]
    return names


#: marks, in a name pattern, the `__init__` parameter a Parameter's `name=` formats
#: (`f"expert_{idx}_w"` is `expert_` HOLE `idx` HOLE `_w`)
_HOLE = "\x00"


def _name_template(given: ast.expr, value: ast.expr, ctx: Context) -> str | None:
    """The pattern of a Parameter's `name=` built from text and parameters of the Cell's
    own `__init__` it never rebinds (`f"expert_{idx}_w"`, `"expert_" + str(idx)`); None
    for anything else."""
    init = _enclosing_init(value, ctx)
    if init is None:
        return None
    parts: list[str] = []
    pieces = given.values if isinstance(given, ast.JoinedStr) else _concatenated(given)
    if pieces is None:
        return None
    binds = instances(ctx).bindings_of(init)
    for piece in pieces:
        if isinstance(piece, ast.FormattedValue) and piece.conversion == -1 and piece.format_spec is None:
            piece = piece.value
        elif isinstance(piece, ast.Call) and ctx.qualname(piece.func) == "builtins.str" and len(piece.args) == 1 and not piece.keywords:
            piece = piece.args[0]
        if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
            parts.append(piece.value)
        elif isinstance(piece, ast.Name) and [type(b) for b in binds.get(piece.id, [])] == [ast.arg]:
            parts.append(f"{_HOLE}{piece.id}{_HOLE}")
        else:
            return None
    return "".join(parts)


def _names_formatted(e: ast.expr, ctx: Context) -> bool:
    """Does the file's own Cell `e` builds name a Parameter from an `__init__` argument?"""
    q = ctx.qualname(e.func) if isinstance(e, ast.Call) else None
    if not q or q.startswith("mindspore."):
        return False
    names = _possible_names(e, ctx, 0)
    cached = ctx.cache.get(f"MS126-names:{q}")
    return names is not None and cached is not None and any(_HOLE in n for n in cached)


def _concatenated(e: ast.expr) -> list[ast.expr] | None:
    """The operands of a `+` chain of at least two terms (`"expert_" + str(idx)`)."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add)):
        return None
    left = _concatenated(e.left)
    return [*(left if left is not None else [e.left]), e.right]


def _enclosing_init(node: ast.AST, ctx: Context) -> ast.FunctionDef | None:
    """The `__init__` of a class that `node` is written in, directly."""
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        up = ctx.parent(up)
    if isinstance(up, ast.FunctionDef) and up.name == "__init__" and isinstance(ctx.parent(up), ast.ClassDef):
        return up
    return None


def _resolved_names(names: frozenset[str], e: ast.Call, q: str, ctx: Context, turn: int) -> frozenset[str] | None:
    """`names` with each formatted `__init__` parameter replaced by what the construction
    `e` passes: a literal by its text, the variable of the comprehension over `range(...)`
    that builds `e` by a value of its own to this `turn` (each turn gets another number).
    Measured (written/heldout35d case `r2_experts_list_of_custom_cells`, probes
    `fix35i_cl_*`): `[Expert(d, i) for i in range(e)]` naming its Parameter
    `f"expert_{idx}_w"` compiles at LAX and STRICT; the same name for all, or `f"..{d}.."`
    of an argument every cell shares, clashes. None when an argument is anything else."""
    found = ctx.scopes.class_info(q)
    init = next((m for m in found[1].node.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if found else None
    if init is None or any(isinstance(x, ast.Starred) for x in e.args) or any(k.arg is None for k in e.keywords):
        return None
    a = init.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)][1:]
    out: set[str] = set()
    for n in names:
        pieces = n.split(_HOLE)
        for i in range(1, len(pieces), 2):
            given = _argument(e, pieces[i], positional)
            text = _argument_text(given, e, ctx, turn) if given is not None else None
            if text is None:
                return None
            pieces[i] = text
        out.add("".join(pieces))
    return frozenset(out)


def _argument(site: ast.Call, param: str, positional: list[str]) -> ast.expr | None:
    """What the construction `site` passes for `__init__`'s `param` (None: its default)."""
    given = next((k.value for k in site.keywords if k.arg == param), None)
    if given is None and param in positional and positional.index(param) < len(site.args):
        given = site.args[positional.index(param)]
    return given


def _argument_text(given: ast.expr, site: ast.Call, ctx: Context, turn: int) -> str | None:
    """The text a formatted argument gives: a literal's, or, for the variable of the
    comprehension over `range(...)` building `site`, one distinct to `turn`."""
    if isinstance(given, ast.Constant) and isinstance(given.value, (int, str)):
        return str(given.value)
    if not isinstance(given, ast.Name):
        return None
    comp = ctx.parent(site)
    if not (isinstance(comp, ast.ListComp) and comp.elt is site and len(comp.generators) == 1):
        return None
    gen = comp.generators[0]
    ranged = isinstance(gen.iter, ast.Call) and ctx.qualname(gen.iter.func) == "builtins.range"
    if ranged and isinstance(gen.target, ast.Name) and gen.target.id == given.id:
        return f"\x01turn{turn}"
    return None


#: calls or names in a Cell class that give Parameters names other than its attributes'
#: (registration by name, no prefix, renaming, Parameters gathered from other cells)
_RENAMING_WORDS = frozenset(
    {
        "setattr", "__setattr__", "insert_child_to_cell", "_params", "_cells", "auto_prefix",
        "update_parameters_name", "ParameterTuple", "clone", "name", "__dict__", "vars",  # `.name` stored
    }
)  # fmt: skip


def _class_parameter_names(q: str, ctx: Context, depth: int, top: bool) -> frozenset[str] | None:
    """Name patterns of the Parameters of the Cell class `q` of this module (its bases of
    this module up to `nn.Cell` included): `Cell.__setattr__` renames a sub-cell's
    Parameters `attr.` + their path (`update_parameters_name`) and names an unnamed
    Parameter after its attribute (`insert_param_to_cell` keeps a given name). None when a
    base is not known, the class renames (`_RENAMING_WORDS`), or an attribute holds a
    container of cells or Parameters (unregistered, they keep names of their own). `top`:
    the Cell is used on its own (not held by another Cell)."""
    found = ctx.scopes.class_info(q)
    if found is None or found[0] is not ctx.scopes.info or depth > 4:
        return None
    cls = found[1].node
    out: set[str] = set()
    for base in cls.bases:
        bq = ctx.qualname(base) or ""
        if bq in ("mindspore.nn.Cell", "mindspore.nn.cell.Cell"):
            continue
        inherited = _class_parameter_names(bq, ctx, depth + 1, top) if bq else None
        if inherited is None:
            return None
        out |= inherited
    dead = _dead_init_statements(cls, ctx)
    for n in ast.walk(cls):
        if dead and id(n) in dead:
            continue  # a store in a branch no construction takes
        if isinstance(n, ast.Name) and n.id in _RENAMING_WORDS and n.id != "name":
            return None
        if isinstance(n, ast.Attribute) and n.attr in _RENAMING_WORDS and (n.attr != "name" or isinstance(n.ctx, ast.Store)):
            return None  # `p.name = ...` renames; reading `self.name` does not
        if isinstance(n, ast.keyword) and n.arg == "auto_prefix":
            return None
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            attrs = _self_attrs([t for target in targets for t in ast.walk(target) if isinstance(t, ast.expr)])
            if not attrs or n.value is None:
                continue
            for attr in attrs:
                named = _stored_names(n.value, attr, ctx, depth, top)
                if named == {attr} and _given_no_parameter(cls, n.value, ctx, depth):
                    named = set()  # `self.s = s`, every construction passing a number
                if named is None:
                    return None
                out |= named
    return frozenset(out)


def _dead_init_statements(cls: ast.ClassDef, ctx: Context) -> set[int]:
    """Ids of the statements of `cls`'s `__init__` in the branch of an `if` that no
    construction of this file takes (`if learn: self.s = Parameter(...)` with `learn`
    left False everywhere): measured (written/heldout34a probes `fix34e_ncp_cond_param_*`),
    such a Parameter is never made and two instances compile."""
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None:
        return set()
    inst = instances(ctx)
    out: set[int] = set()
    for st in init.body:
        if isinstance(st, ast.If):
            v = inst.init_value(st.test, cls, init)
            if v is not UNKNOWN:
                out.update(id(n) for b in (st.orelse if v else st.body) for n in ast.walk(b))
    return out


def _stored_names(value: ast.expr, attr: str, ctx: Context, depth: int, top: bool) -> set[str] | None:
    """Name patterns `self.<attr> = value` gives Parameters: a `mindspore.nn` layer's names
    under `attr.`, a Cell class of this file's likewise, `attr` for a Parameter or any
    other value, but a Parameter's literal `name=` on a Cell used on its own (`top`:
    measured, probes `fix32c_cl_named_param_*`; held by another Cell, `update_parameters_name`
    renames it by its path, which is not measured: both count); None for a
    Parameter name not written as a literal, or a container of cells or Parameters."""
    if _holds_cells(value, ctx):
        return None
    if isinstance(value, (ast.Constant, ast.JoinedStr, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
        return set()  # a number, a string, arithmetic (a Tensor at most): no Parameter
    q = (ctx.qualname(value.func) or "") if isinstance(value, ast.Call) else ""
    if q.startswith("mindspore.") and not q.startswith("mindspore.nn.") and not q.endswith(".Parameter"):
        return set()  # `ops.ReduceMean()`, `ms.Tensor(...)`: no Parameter of the Cell
    if q.endswith(".Parameter"):
        given = next((k.value for k in value.keywords if k.arg == "name"), value.args[1] if len(value.args) > 1 else None)  # type: ignore[attr-defined]
        if given is None or (isinstance(given, ast.Constant) and given.value is None):
            return {attr}
        if not (isinstance(given, ast.Constant) and isinstance(given.value, str)):
            template = _name_template(given, value, ctx) if top and depth == 0 else None
            return {template} if template is not None else None
        return {given.value} if top else {attr, given.value}
    if q.startswith("mindspore.nn."):
        layer = q.rsplit(".", 1)[-1]
        if layer in _PARAMETER_FREE:
            return set()
        inner = _container_names(value, ctx, depth + 1) if layer in _CONTAINERS else _POSSIBLE_NAMES.get(layer)  # type: ignore[arg-type]
        return {f"{attr}.{n}" for n in inner} if inner is not None else {attr}
    if q and ctx.scopes.is_cell_class(q):
        nested = _class_parameter_names(q, ctx, depth + 1, top=False)
        return {f"{attr}.{n}" for n in nested} if nested is not None else {attr}
    return {attr}


def _given_no_parameter(cls: ast.ClassDef, value: ast.expr, ctx: Context, depth: int) -> bool:
    """`self.<attr> = value` with `value` a parameter of `cls`'s `__init__` it never rebinds:
    does every place of this file building `cls` give it (or leave it its default) a value
    that holds no Parameter (a number, a string, a Tensor, a loop variable over such
    values...)? Unregistered, such an attribute names no Parameter. False when `cls` has
    subclasses here (they may pass anything through `super().__init__`) or is never built
    by name."""
    if not isinstance(value, ast.Name) or depth > 3:
        return False
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None or not _inside(value, init, ctx):
        return False
    inst = instances(ctx)
    binds = inst.bindings_of(init).get(value.id, [])
    if len(binds) != 1 or not isinstance(binds[0], ast.arg) or inst.subclasses(cls):
        return False
    a = init.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)][1:]
    if value.id not in positional and value.id not in {p.arg for p in a.kwonlyargs}:
        return False  # `*args` / `**kwargs`
    defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
    defaults.update((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None)
    sites = inst.instantiations(cls.name)
    if not sites:
        return False
    for site in sites:
        if any(isinstance(x, ast.Starred) for x in site.args) or any(k.arg is None for k in site.keywords):
            return False
        given = next((k.value for k in site.keywords if k.arg == value.id), None)
        if given is None and value.id in positional and positional.index(value.id) < len(site.args):
            given = site.args[positional.index(value.id)]
        if given is None:
            default = defaults.get(value.id)
            if default is None or not _literal(default):
                return False
        elif _may_hold_parameter(given, ctx, depth + 1):
            return False
    return True


def _inside(node: ast.AST, func: ast.AST, ctx: Context) -> bool:
    """Is `node` within `func` (by its parents)?"""
    up: ast.AST | None = node
    while up is not None:
        if up is func:
            return True
        up = ctx.parent(up)
    return False


#: builtins whose result is never a Parameter
_PLAIN_BUILTINS = frozenset(
    {"builtins.len", "builtins.int", "builtins.float", "builtins.str", "builtins.bool", "builtins.range", "builtins.round"}
)


def _literal(e: ast.expr) -> bool:
    """A literal (`0.5`, `(3, 5)`, `None`): no Parameter."""
    try:
        ast.literal_eval(e)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _may_hold_parameter(e: ast.expr, ctx: Context, depth: int) -> bool:
    """May `e` (or an item of it) be a Parameter, where it is written? No for literals,
    arithmetic (a Tensor at most), `ms.Tensor(...)` and other MindSpore calls but
    `Parameter`, a few builtins of numbers, and names bound to such values: a loop or
    comprehension variable over one, a local or module name bound once, a parameter of a
    Cell's `__init__` every construction gives one (`_given_no_parameter`). Else yes."""
    if depth > 6:
        return True
    t = type(e)
    if t is ast.Constant or t is ast.JoinedStr or t is ast.Compare:
        return False
    if t is ast.BinOp or t is ast.UnaryOp:
        return False  # arithmetic of a Parameter is a Tensor, not a Parameter
    if t is ast.Tuple or t is ast.List or t is ast.Set:
        return any(_may_hold_parameter(x, ctx, depth + 1) for x in e.elts)  # type: ignore[attr-defined]
    if t is ast.IfExp:
        return _may_hold_parameter(e.body, ctx, depth + 1) or _may_hold_parameter(e.orelse, ctx, depth + 1)  # type: ignore[attr-defined]
    if t is ast.Call:
        q = ctx.qualname(e.func) or ""  # type: ignore[attr-defined]
        if q in _PLAIN_BUILTINS:
            return False
        return not (q.startswith("mindspore.") and not q.startswith("mindspore.nn.") and "Parameter" not in q)
    if t is ast.Name:
        return _name_may_hold_parameter(e, ctx, depth)  # type: ignore[arg-type]
    return True


def _name_may_hold_parameter(e: ast.Name, ctx: Context, depth: int) -> bool:
    """`_may_hold_parameter` of a name read at `e`: what binds it there."""
    up: ast.AST | None = ctx.parent(e)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        if isinstance(up, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for g in up.generators:
                if any(isinstance(n, ast.Name) and n.id == e.id for n in ast.walk(g.target)):
                    return _may_hold_parameter(g.iter, ctx, depth + 1)
        if isinstance(up, ast.For) and any(isinstance(n, ast.Name) and n.id == e.id for n in ast.walk(up.target)):
            return _may_hold_parameter(up.iter, ctx, depth + 1)
        up = ctx.parent(up)
    if not (up is None or isinstance(up, ast.FunctionDef)):
        return True
    binds = instances(ctx).bindings_of(up).get(e.id, []) if up is not None else []
    if not binds:  # a module name: bound once by a plain assignment
        top = ctx.module_bindings().get(e.id, [])
        if len(top) == 1 and isinstance(top[0], ast.Assign) and len(top[0].targets) == 1 and isinstance(top[0].targets[0], ast.Name):
            return _may_hold_parameter(top[0].value, ctx, depth + 1)
        return True
    if len(binds) != 1 or up is None:
        return True
    b = binds[0]
    if isinstance(b, ast.arg):
        owner = ctx.parent(up)
        if up.name == "__init__" and isinstance(owner, ast.ClassDef):
            return not _given_no_parameter(owner, e, ctx, depth)
        return True
    st = ctx.parent(b)
    if isinstance(st, ast.Assign) and len(st.targets) == 1 and st.targets[0] is b:
        return _may_hold_parameter(st.value, ctx, depth + 1)
    return True


def _holds_cells(value: ast.expr, ctx: Context) -> bool:
    """Is `value` a list, tuple, dict or comprehension that may hold cells or Parameters
    (which, unregistered, keep their own names)?"""
    if not isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp, ast.GeneratorExp, ast.SetComp)):
        return False
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            q = ctx.qualname(n.func) or ""
            if q.startswith("mindspore.") or not q or ctx.scopes.is_cell_class(q):
                return True
    return False


def _severity(attr: str, used: _LazyUsed, several: bool) -> Severity:
    """Compilation fails (parameter names clash) only when several cells of the list are
    used by compiled code; otherwise the parameters are "just" invisible to optimizers."""
    return "error" if several and attr in used else "warning"
