"""MS227: an attribute only a cell's `construct` creates on `self`, read by another compiled function."""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Iterable
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, body_statements, own_nodes
from npu_lsp.rules.graphmode.inner_cells import inner_classes
from npu_lsp.rules.graphmode.values import returns_reached
from npu_lsp.scope import ModuleInfo

#: the bases a class may have for its attributes to be all known here (a base of this file,
#: or another library's, may create the attribute itself)
_CELL_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})
_NONE: dict[str, ast.stmt] = {}


@rule(code="MS227", name="attribute-created-in-graph", severity="error", family="graphmode")
class AttributeCreatedInGraph(GraphRule):
    """## What it does
    Flags a compiled function reading an attribute that no code but a cell's `construct`
    ever stores: the parent's `self.moe.aux_loss` after `self.moe(x)` when the MoE layer's
    `construct` does `self.aux_loss = ...` and `__init__` never sets it, or a method of the
    same cell (`self.penalty()` reading `self.stat`) that `construct` calls after storing it.

    ## Why is this bad?
    MindSpore resolves `self.<attr>` on the Python object while compiling, and a store in
    compiled code does not create the attribute for the other functions of the graph: under
    LAX compilation stops with `AttributeError: ClassMember: '...<MoELayer>' object has no
    attribute 'aux_loss'` (STRICT already refuses the store itself, MS132). Read later in the
    same `construct`, read through `getattr(self.moe, "aux_loss", 0.0)`, never read, or
    created first in `__init__` (`self.aux_loss = None`, `= 0.0` or a Tensor), the attribute
    compiles under LAX (measured with MindSpore 2.10, written/heldout28a probes `fix28d_a_*`).

    ## Example
    ```python
    class MoELayer(nn.Cell):
        def construct(self, x):
            self.aux_loss = (probs.mean(0) ** 2).sum()
            return out

    class Model(nn.Cell):
        def construct(self, x):
            y = self.moe(x)
            return y.mean() + 0.01 * self.moe.aux_loss
    ```

    ## Use instead
    Return the value (`y, aux = self.moe(x)`), or create the attribute in `__init__`
    (`self.aux_loss = None`; under STRICT only a Parameter updated with `ops.assign` works).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (an undefined `self.y`: `ClassMember ... has no attribute`) and
      section 2 (STRICT refuses the store itself).
    - MindSpore 2.10, measured at LAX: written/heldout28a `moe_aux_loss_stored_on_self` and
      probes `fix28d_a_*` (a sibling cell's attribute, a Python int, a method of the same cell).
    """

    nodes = (ast.FunctionDef,)
    words = ("construct",)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # a list or `()`: every compiled function comes here, most files create nothing
        created = _created(ctx)
        if not created:
            return ()
        assert isinstance(node, ast.FunctionDef)
        seg = ctx.segment(node)
        if not any(f".{a}" in seg for c in created.values() for a in c):
            return ()
        owner = analyzer(ctx).owner_class(node)
        if owner is None:
            return ()
        info = ctx.scopes.info
        out: list[Diagnostic] = []
        if node.name == "construct" and owner.name in created and ctx.scope and ctx.scope.level == "lax":
            out.extend(self._read_by_another_call(node, owner.name, created[owner.name], ctx))
        for n in own_nodes(node):
            if type(n) is not ast.Attribute or type(n.ctx) is not ast.Load:
                continue
            cls = _read_class(n, owner, node, info)
            store = created.get(cls, _NONE).get(n.attr) if cls is not None else None
            if store is None:
                continue
            out.append(
                ctx.diagnostic(
                    self,
                    n,
                    f"`{ctx.segment(n)}` is created only by `{cls}.construct` (line {store.lineno}): MindSpore reads the attribute on the Python object while compiling, where it does not exist (AttributeError: ... object has no attribute '{n.attr}'); return the value, or set `self.{n.attr}` in `__init__`",
                )
            )
        return out


    def _read_by_another_call(
        self, node: ast.FunctionDef, cls: str, stores: dict[str, ast.stmt], ctx: Context
    ) -> list[Diagnostic]:
        """LAX, a cell compiled inside another graph (`inner_cells`: read by an `@ms.jit`
        function, given to a grad builder): `self.<attr>` read in `construct` where no store
        of it in this call can come first (the store on a side of an `if` that returns), so
        another call of the cell must have made it. As part of the top cell (`model(bx)` in
        GRAPH_MODE) that compiles; inside another graph MindSpore 2.10 fails with "The
        pointer[seq_abs] is null" (written/heldout34c `revin_train_step_stats_on_self`,
        probes `fix35h_rv_*`: `@ms.jit` forward, `value_and_grad`, `ms.grad`; stored and read
        in one call, or never read, compiles)."""
        if cls not in inner_classes(ctx):
            return []
        writes: dict[str, list[ast.AST]] = {}
        for n in own_nodes(node):
            if type(n) is ast.Attribute and type(n.ctx) is ast.Store and _self_attr(n) and n.attr in stores:
                writes.setdefault(n.attr, []).append(n)
        out: list[Diagnostic] = []
        for n in own_nodes(node):
            if type(n) is not ast.Attribute or type(n.ctx) is not ast.Load or not _self_attr(n):
                continue
            ws = writes.get(n.attr)
            if not ws or any(not _exclusive(w, n, node, ctx) for w in ws):
                continue
            if not _split_by_calls(node, cls, ws, n, ctx):
                continue
            out.append(
                ctx.diagnostic(
                    self,
                    n,
                    f"`self.{n.attr}` is created only by `{cls}.construct` (line {stores[n.attr].lineno}) on a path this read never follows, so another call of the cell made it; the cell is compiled inside another graph (an `@ms.jit` function or a gradient), where MindSpore cannot compile that (LAX: \"The pointer[seq_abs] is null\"); set `self.{n.attr}` in `__init__` (`= None`) or return the value",
                )
            )
            writes.pop(n.attr)  # one report per attribute
        return out


def _exclusive(store: ast.AST, read: ast.AST, func: ast.AST, ctx: Context) -> bool:
    """Can `read` never run after `store` in one call of `func`: an enclosing `if` of the
    store has the read on its other side, or the store's side ends with `return` and the
    read comes after that `if`."""
    child: ast.AST = store
    p = ctx.parent(store)
    while p is not None and p is not func:
        if type(p) is ast.If and child is not p.test:
            side, other = (p.body, p.orelse) if _within(child, p.body) else (p.orelse, p.body)
            if any(_contains(st, read) for st in other):
                return True
            if not _contains(p, read) and side and type(side[-1]) in (ast.Return, ast.Raise):
                return True
        elif isinstance(p, (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.Lambda)):
            return False
        child, p = p, ctx.parent(p)
    return False


def _split_by_calls(construct: ast.FunctionDef, cls: str, stores: list[ast.AST], read: ast.AST, ctx: Context) -> bool:
    """Do the calls of the cell that compiled code of this file makes (`self.revin(x, "norm")`,
    `self.revin(x, "denorm")` in a holder's methods) split: one compiles a `return` after a
    store (its arguments fold the `if` to the store's side), another a `return` on the read's
    path and none after a store. Calls not found, or not folded apart: no answer (False)."""
    calls = _sub_cell_calls(cls, ctx)
    if len(calls) < 2:
        return False
    store_sides = [side for st in stores if (side := _returning_side(st, construct, ctx)) is not None]
    if len(store_sides) != len(stores):
        return False
    storing = reading = False
    for call, caller in calls:
        reached = returns_reached(construct, call, caller, ctx)
        in_store = [r for r in reached if any(_contains(st, r) for side in store_sides for st in side)]
        if in_store:
            storing = True
        elif any(_contains(r, read) or r.lineno > read.lineno for r in reached):  # type: ignore[attr-defined]
            reading = True
    return storing and reading


def _returning_side(store: ast.AST, func: ast.AST, ctx: Context) -> list[ast.stmt] | None:
    """The side of the innermost `if` around `store` when it ends with `return`."""
    child: ast.AST = store
    p = ctx.parent(store)
    while p is not None and p is not func:
        if type(p) is ast.If and child is not p.test:
            side = p.body if _within(child, p.body) else p.orelse
            return side if side and type(side[-1]) is ast.Return else None
        child, p = p, ctx.parent(p)
    return None


def _sub_cell_calls(cls: str, ctx: Context) -> list[tuple[ast.Call, ast.AST]]:
    """(call, calling method) for `self.<sub>(...)` in the methods of this file's classes whose
    `__init__` makes `self.<sub>` an instance of `cls` (once per file and class)."""
    key = ("ms227.calls", cls)
    hit: list[tuple[ast.Call, ast.AST]] | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    hit = ctx.cache[key] = []
    info = ctx.scopes.info
    target = f"{info.module}.{cls}"
    for holder in info.classes.values():
        subs = {a for a, t in holder.attr_types.items() if t == target}
        if not subs:
            continue
        for m in holder.node.body:
            if type(m) is not ast.FunctionDef or m.name == "__init__":
                continue
            for n in ast.walk(m):
                f = n.func if type(n) is ast.Call else None
                if type(f) is ast.Attribute and f.attr in subs and _self_attr(f):
                    hit.append((n, m))  # type: ignore[arg-type]
    return hit


def _within(child: ast.AST, block: list[ast.stmt]) -> bool:
    return any(st is child for st in block)


def _contains(tree: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(tree))


def _read_class(n: ast.Attribute, owner: ast.ClassDef, func: ast.FunctionDef, info: ModuleInfo) -> str | None:
    """The class of this file whose instance `n` reads an attribute of: `self.<attr>` in a
    method other than `construct`, or `self.<sub>.<attr>` with `__init__` making `self.<sub>`
    an instance of a class of this file."""
    v = n.value
    if type(v) is ast.Name:
        return owner.name if v.id == "self" and func.name != "construct" else None
    if type(v) is not ast.Attribute or type(v.value) is not ast.Name or v.value.id != "self":
        return None
    cinfo = info.classes.get(owner.name)
    target = cinfo.attr_types.get(v.attr) if cinfo is not None else None
    if target is None:
        return None
    mod, _, name = target.rpartition(".")
    return name if mod == info.module else None


def _created(ctx: Context) -> dict[str, dict[str, ast.stmt]]:
    """Class name -> attributes its `construct` stores on `self` and nothing else in the file
    creates (`__init__`, another method, the class body, an outside store or `setattr`), for
    the classes whose only base is `nn.Cell`; once per file."""
    hit: dict[str, dict[str, ast.stmt]] | None = ctx.cache.get("ms227.created")
    if hit is not None:
        return hit
    hit = ctx.cache["ms227.created"] = {}
    # (`ctx.mentions`: `s in ctx.text`, answered from the text's distinct words for a word)
    if ctx.mentions("setattr") or ctx.mentions("__dict__") or ctx.mentions("hasattr"):
        # set by name, or read under a `hasattr` test MindSpore folds: not followed here
        return hit
    info = ctx.scopes.info
    stores: dict[str, dict[str, ast.stmt]] = {}
    counts: dict[str, int] = {}  # `self.<attr> =` targets in these constructs, per name
    for cls in info.classes.values():
        construct = cls.methods.get("construct")
        if construct is None or not cls.bases or not set(cls.bases) <= _CELL_BASES or "__getattr__" in cls.methods:
            continue
        found: dict[str, ast.stmt] = {}
        for st in body_statements(construct.body, ctx):
            if type(st) is ast.Assign:
                for target in st.targets:
                    # a plain name, most targets, holds no `self.<attr>`: no list for it
                    if type(target) is ast.Name:
                        continue
                    for t in (target,) if type(target) is ast.Attribute else _flat([target]):
                        if _self_attr(t):
                            a = t.attr  # type: ignore[attr-defined]
                            found.setdefault(a, st)
                            counts[a] = counts.get(a, 0) + 1
        if found:
            body_names = {t.id for st in cls.node.body for t in _targets(st) if type(t) is ast.Name}
            found = {a: st for a, st in found.items() if a not in body_names and a not in cls.methods}
        if found:
            stores[cls.name] = found
    if not stores:
        return hit
    # any other store of the name in the file (`__init__`, another method, outside code:
    # `net.moe.aux_loss = 0.0`, `self.moe.aux_loss = ...` in a construct) may create the
    # attribute first: counted on the text, where a look-alike only drops a name
    cell_attrs = _cell_attributes()
    text = ctx.text
    for c in stores.values():
        for a in list(c):
            if a in cell_attrs or len(_store_pattern(a).findall(text)) > counts[a]:
                del c[a]
    hit.update({k: v for k, v in stores.items() if v})
    return hit


@functools.cache
def _store_pattern(attr: str) -> re.Pattern[str]:
    """`.<attr>` stored: `= v`, `+= v`, `: T = v`, or first in a tuple target (`.attr, b =`);
    a keyword argument after it on the line counts too (a name dropped, never one kept)."""
    return re.compile(
        r"\." + re.escape(attr) + r"\b[ \t]*(?:(?:[-+*/@%&|^]|//|\*\*|<<|>>)?=(?!=)|[,:)\]][^\n#]*?(?<![=!<>])=(?!=))"
    )


@functools.cache
def _cell_attributes() -> frozenset[str]:
    """What every Cell has before its `__init__` runs (`training`, `cells`, ...)."""
    text = resources.files(__package__).joinpath("ms_cell_attributes.json").read_text("utf-8")
    return frozenset(json.loads(text)["attributes"])


def _targets(st: ast.stmt) -> list[ast.expr]:
    if type(st) is ast.Assign:
        return _flat(st.targets)
    if type(st) in (ast.AnnAssign, ast.AugAssign):
        return [st.target]  # type: ignore[attr-defined]
    if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [ast.Name(id=st.name)]  # type: ignore[attr-defined]
    return []


def _flat(targets: list[ast.expr]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for t in targets:
        if type(t) in (ast.Tuple, ast.List):
            out.extend(_flat(t.elts))  # type: ignore[attr-defined]
        elif type(t) is ast.Starred:
            out.extend(_flat([t.value]))
        else:
            out.append(t)
    return out


def _self_attr(t: ast.expr) -> bool:
    return type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self"
