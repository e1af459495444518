"""MS246: (STRICT) an attribute of a plain Python object given to the graph, stored in the
graph and read back (`data.x = self.lin(data.x)` then `data.x[...]`). Also the shared
question `input_object_stored`, which MS145 asks at LAX."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.attribute_stores import object_stores
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes


def _plain_classes(ctx: Context) -> frozenset[str]:
    """The module's plain classes: no base (or `object`), no decorator (a dataclass is left
    out, unmeasured), not a Cell."""
    hit: frozenset[str] | None = ctx.cache.get("object_stores.plain")
    if hit is None:
        hit = ctx.cache["object_stores.plain"] = frozenset(
            st.name
            for st in ctx.tree.body
            if isinstance(st, ast.ClassDef)
            and not st.decorator_list
            and not st.keywords
            and all(type(b) is ast.Name and b.id == "object" for b in st.bases)
        )
    return hit


def _module_value(name: str, ctx: Context) -> ast.expr | None:
    """The value of the one module-level assignment of `name`, if there is exactly one."""
    bound = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, ast.Assign) and any(type(t) is ast.Name and t.id == name for t in st.targets)
    ]
    return bound[0] if len(bound) == 1 else None


def stores_on_objects(ctx: Context, scopes: Iterable[object]) -> bool:
    """Does a compiled function of `scopes` store an attribute of a name other than `self`,
    in a module defining a plain class (MS145's cheap pretest)?"""
    return bool(_plain_classes(ctx)) and any(object_stores(getattr(s, "function", None) or ast.Module(body=[], type_ignores=[])) for s in scopes)


def holds_plain_object(name: str, func: ast.AST, ctx: Context) -> bool:
    """Is `name` a parameter of the compiled `func` (never rebound in it) that every call from
    plain Python gives an instance of a plain class of this module (`Net()(Data(x, ei))`, or a
    module name bound once to one)?"""
    classes = _plain_classes(ctx)
    if not classes:
        return False
    a = analyzer(ctx)
    if a.rebinds(name, func):
        return False
    passed = a.passed_arguments_in(name, func)
    if not passed:
        return False
    for arg, caller in passed:
        if caller is not None:
            return False
        made = _module_value(arg.id, ctx) if type(arg) is ast.Name else arg
        if not (type(made) is ast.Call and type(made.func) is ast.Name and made.func.id in classes):
            return False
    return True


def input_object_stored(e: ast.Attribute, func: ast.AST, ctx: Context) -> ast.Assign | None:
    """The store `p.attr = v` of `func` before the read `e` (`p.attr`, `p` a parameter holding
    a plain Python object, `holds_plain_object`), if any. The graph keeps such a store as a
    JIT Fallback `setattr`: the attribute read back is a Python object (measured, written/
    heldout33a case `r2_data_object_attr_set_in_construct`, probes `fix33e_do_*`: LAX gives
    it to `nn.Dense` as "'int' object has no attribute '__len__'"; STRICT refuses indexing
    it or adding to it, "the inputs should be constant, but found variable"; an attribute
    not stored, or the stored value kept in a local name, compiles)."""
    if type(e.value) is not ast.Name or e.value.id == "self" or not isinstance(e.ctx, ast.Load):
        return None
    stores = object_stores(func).get((e.value.id, e.attr))
    if not stores:
        return None
    at = (e.lineno, e.col_offset)
    before = [st for st in stores if (st.end_lineno or 0, st.end_col_offset or 0) <= at]
    if not before or not holds_plain_object(e.value.id, func, ctx):
        return None
    return min(before, key=lambda st: st.lineno)


@rule(code="MS246", name="input-object-attribute-store-read", severity="error", family="graphmode")
class InputObjectAttributeStoreRead(GraphRule):
    """## What it does
    Under the STRICT syntax level, flags a read of an attribute of a plain Python object the
    graph was given (an instance of a plain class of the module, `Net()(Data(x,
    edge_index))`) after the graph stored that attribute: `data.x = self.lin(data.x)` then
    `data.x[data.edge_index[0]]` or `data.x + 1.0`, as PyG-style code updates a `Data`
    object in place.

    ## Why is this bad?
    MindSpore keeps the store on a Python object as a JIT Fallback `setattr`, and reads the
    attribute back as a Python object. STRICT cannot run the script that indexes it or
    computes with it: MindSpore 2.10 stops with `When handling script
    '__py_exec_index0_getitem__(__input_key_0__,__input_key_1__,) in graph mode', the inputs
    should be constant, but found variable '__input_key_0__' to be nonconstant` (returning
    it crashes). LAX runs the script, but a layer that reads its shape (`nn.Dense`) fails on
    it ("'int' object has no attribute '__len__'", MS145). Storing the attribute without
    reading it back, and reading an attribute the graph did not store, compile.

    ## Example
    ```python
    def construct(self, data):
        data.x = self.lin(data.x)
        return data.x[data.edge_index[0]]
    ```

    ## Use instead
    Keep the new value in a local name:
    ```python
    def construct(self, data):
        x = self.lin(data.x)
        return x[data.edge_index[0]]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (rejected only under STRICT: LAX falls back to Python).
    - Measured on MindSpore 2.10 CPU (written/heldout33a case
      `r2_data_object_attr_set_in_construct`, probes `fix33e_do_*`): after `data.x =
      self.lin(data.x)`, `data.x[data.edge_index[0]]`, `data.x[0]`, `data.x + 1.0` are
      refused under STRICT and compile under LAX; `return data.x` crashes under STRICT;
      `self.lin2(data.x)` fails at both levels; `data.h = ...` then `data.x[...]`, and no
      store, compile at both levels.
    """

    nodes = (ast.Assign, ast.AugAssign)

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        return target is ast.Attribute

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        func = ctx.function
        if func is None or not ctx.scope or not ctx.scope.strict:
            return ()
        if type(node) is ast.AugAssign:
            t = node.target
            if type(t) is not ast.Attribute or type(t.value) is not ast.Name or t.value.id == "self":
                return ()
            return self._module_cell_counter(node, t, func, ctx)
        assert isinstance(node, ast.Assign)
        if len(node.targets) != 1:
            return ()
        target = node.targets[0]
        if type(target) is not ast.Attribute or type(target.value) is not ast.Name or target.value.id == "self":
            return ()
        return self._check(node, target, func, ctx)

    def _module_cell_counter(self, node: ast.Assign | ast.AugAssign, t: ast.Attribute, func: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        """`model.steps += 1` / `if loss < model.best: model.best = loss` in compiled code,
        `model` a module-level Cell whose `__init__` sets that attribute to a Python number:
        once the graph stores the attribute, every read of it is a JIT Fallback value, and
        STRICT cannot compute with it, before the store too (measured, written/heldout34c
        cases `train_early_stopping_counter_on_model`, `r2_train_counter_attr_increment_only`,
        probes `fix34f_mc_*`: "When handling script '__input_key_0__ + __input_key_1__' /
        '... < ...' in graph mode, the inputs should be constant" for `+=`, `= x + 1`, a
        comparison; a store never read, or reading another attribute, compiles)."""
        name, attr = t.value.id, t.attr  # type: ignore[attr-defined]
        first = _first_store(func, name, attr)
        if first is not node or not _number_attribute(name, attr, func, ctx):
            return
        read = next(iter(_computed_reads(func, name, attr, ctx)), None)
        if read is None:
            return
        yield ctx.diagnostic(
            self,
            read,
            f"`{name}.{attr}` is an attribute of the module-level Cell `{name}` that this graph stores (line {node.lineno}); STRICT then reads it as a JIT Fallback value and cannot compute with it (\"the inputs should be constant, but found variable\"): keep the value in a `Parameter` updated with `ops.assign`, or outside the compiled function",
        )

    def _check(self, node: ast.Assign, t: ast.Attribute, func: ast.AST, ctx: Context) -> Iterator[Diagnostic]:
        name, attr = t.value.id, t.attr  # type: ignore[attr-defined]
        if not holds_plain_object(name, func, ctx):
            yield from self._module_cell_counter(node, t, func, ctx)
            return
        stores = object_stores(func).get((name, attr), [])
        if not stores or min(stores, key=lambda st: (st.lineno, st.col_offset)) is not node:
            return  # one report per attribute: at its first store
        end = (node.end_lineno or 0, node.end_col_offset or 0)
        read = next(
            (
                n
                for n in sorted(
                    (
                        n
                        for n in own_nodes(func)
                        if type(n) is ast.Attribute
                        and n.attr == attr
                        and isinstance(n.ctx, ast.Load)
                        and type(n.value) is ast.Name
                        and n.value.id == name
                    ),
                    key=lambda n: (n.lineno, n.col_offset),
                )
                if (n.lineno, n.col_offset) >= end
            ),
            None,
        )
        if read is None or not holds_plain_object(name, func, ctx):
            return
        yield ctx.diagnostic(
            self,
            read,
            f"`{name}.{attr}` was stored in this graph (line {node.lineno}) on the Python object `{name}`; STRICT reads it back as a JIT Fallback value and cannot index it or compute with it (\"the inputs should be constant, but found variable\"): keep the new value in a local name",
        )


def _first_store(func: ast.AST, name: str, attr: str) -> ast.stmt | None:
    """The first statement of `func` (in source order) storing `name.attr`, `=` or `op=`."""
    first: ast.stmt | None = None
    for n in own_nodes(func):
        if type(n) is ast.Assign:
            hit = any(type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name and t.value.id == name for t in n.targets)
        elif type(n) is ast.AugAssign:
            t = n.target
            hit = type(t) is ast.Attribute and t.attr == attr and type(t.value) is ast.Name and t.value.id == name
        else:
            continue
        if hit and (first is None or (n.lineno, n.col_offset) < (first.lineno, first.col_offset)):
            first = n
    return first


def _computed_reads(func: ast.AST, name: str, attr: str, ctx: Context) -> list[ast.Attribute]:
    """The reads of `name.attr` in `func` that are an operand of arithmetic or a comparison
    (what MindSpore runs as a JIT Fallback script on them), in source order."""
    out = []
    for n in own_nodes(func):
        if not (type(n) is ast.Attribute and n.attr == attr and type(n.value) is ast.Name and n.value.id == name):
            continue
        parent = ctx.parent(n)
        if type(parent) in (ast.BinOp, ast.Compare) or (type(parent) is ast.AugAssign and parent.target is n):
            out.append(n)  # (`model.steps += 1` reads the attribute too)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


def _number_attribute(name: str, attr: str, func: ast.AST, ctx: Context) -> bool:
    """Is `name` a module-level Cell of this file's class (read, not bound, by `func`) whose
    `__init__` binds `self.<attr>` only to Python numbers?"""
    from npu_lsp.rules.graphmode.parameter_receivers import module_cell

    recv = ast.Name(id=name, ctx=ast.Load())
    if not module_cell(recv, ctx, func):
        return False
    value = _module_value(name, ctx)
    if not (type(value) is ast.Call and type(value.func) is ast.Name):
        return False
    cls = next((c for c in ctx.tree.body if type(c) is ast.ClassDef and c.name == value.func.id), None)
    if cls is None:
        return False
    bound = analyzer(ctx).self_values(cls).get(attr, [])
    return bool(bound) and all(
        type(v) is ast.Constant and type(v.value) in (int, float)
        or (type(v) is ast.UnaryOp and type(v.operand) is ast.Constant and type(v.operand.value) in (int, float))
        for v in bound
    )
