"""Python numbers that compiled LAX code stores on `self` (`self.calls += 1`, `self.scale =
2.0`) or into an object held on `self` (`self.cfg.ratio = 0.5`): LAX runs the store as a JIT
Fallback `setattr`, and the attribute read anywhere in the function, before or after the
store, is a Python object (MS145)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.attribute_stores import self_stores
from npu_lsp.rules.graphmode.flow import analyzer, python_number, self_store_text, updates_self
from npu_lsp.rules.graphmode.helpers import own_nodes
from npu_lsp.rules.graphmode.lax_functions import lax_scopes
from npu_lsp.rules.graphmode.values import in_dead_branch

#: builtins whose result is a Python number
_NUMBER_BUILTINS = frozenset({"builtins.int", "builtins.float", "builtins.round", "builtins.abs", "builtins.len", "builtins.bool"})


#: a store on `self` of what may be a number (`self.n = 0.5`, `self.r = 1.0 - ...`,
#: `self.a = min(...)`, `self.s = self.k / 2`): `__init__`'s own stores match too, the
#: statements decide (`number_store`); names are read atomically as in flow's `_SELF_UPDATE`
_SELF_NUMBER = re.compile(r"self\.(?=(\w+))\1[ \t]*=[ \t]*(?:[-(.\d]|self\.|min\(|max\(|float\(|int\(|random\.)")


def _stores_self_numbers_text(ctx: Context) -> bool:
    """The text test before `number_store` is asked: a counter-like store on `self`, or a
    store of what may be a number."""
    hit = ctx.cache.get("opaque.self_number")
    if hit is None:
        hit = ctx.cache["opaque.self_number"] = self_store_text(ctx) and (
            updates_self(ctx) or _SELF_NUMBER.search(ctx.text) is not None
        )
    return bool(hit)


def stores_numbers(ctx: Context) -> bool:
    """Does compiled LAX code of this file update a Python number on `self`?"""
    return _stores_self_numbers_text(ctx) and any(
        number_store(st, s.function, ctx)
        for s in lax_scopes(ctx)
        for sts in self_stores(s.function).values()
        for st in sts
    )


def number_stored(e: ast.Attribute, func: ast.AST, ctx: Context) -> bool:
    """`self.n` read in a compiled function that updates a Python number on it
    (`self.calls += 1`, `self.n = self.n + 1`), before or after the store: LAX runs the store
    as a JIT Fallback `setattr`, and reads the attribute as a Python object (measured,
    written/gen18 probes `v20_ct_*`: `x + self.calls * 0`, also read before `self.calls
    += 1`, then `ops.zeros_like(x)`, `ops.cast(y, y.dtype)` or `nn.Dense` fail,
    "DtypeToEnum", "'int' object has no attribute '__len__'"; never read, or only
    printed, it compiles; a tensor stored is read back as the tensor, written/heldout16b
    probes `ls17_sc_plain_*`; fresh v5 seeds 10000089, 10600082)."""
    if not (isinstance(e.value, ast.Name) and e.value.id == "self") or not _stores_self_numbers_text(ctx):
        return False
    stores = self_stores(func).get(e.attr)
    if not stores:
        return False
    return any(
        not in_dead_branch(ctx, func, ctx.span(st)) and number_store(st, func, ctx)
        for st in stores
    )


def number_store(st: ast.stmt, func: ast.AST, ctx: Context) -> bool:
    """Does `st` store a Python number on `self` (`self.n += 1`, `self.n = self.n + 1`,
    `self.scale = 2.0`, `self.ratio = 1.0 - 0.1 * self.calls`, `self.alpha = min(1.0,
    self.step / self.fade_steps)`), an attribute `__init__` sets to a number literal? A
    tensor, a container, None, a call of anything but a number builtin are not numbers here.
    Measured (written/heldout23a probes `lax24a_f64_self_*`): a constant stored alone, or a
    number computed from another number attribute the function never updates, makes the
    attribute a Python object as a counter update does."""
    target = st.target if type(st) is ast.AugAssign else st.targets[0]  # type: ignore[attr-defined]
    return (
        type(target) is ast.Attribute
        and _number(st.value, target.attr, ctx, func)  # type: ignore[attr-defined]
        and _number_attribute(target.attr, func, ctx)
    )


def _number_attribute(attr: str, func: ast.AST, ctx: Context) -> bool:
    """Does every `__init__` of the class `func` belongs to set `self.<attr>` to a number
    literal (`self.calls = 0`), or to a constructor parameter that every place building the
    class gives a number literal or leaves at a number default (`def __init__(self, T=0.1):
    self.T = T`)? A Parameter or tensor updated in place (`self.table = self.table * 2.0`)
    is a tensor (written/zoo14 probe `z19_param_scaled_store_branch_on`). Measured
    (written/heldout27a probes `fix28b_nd_*`): `self.T = self.T + 0.0` in `construct` with
    `T=0.1` left at its default, or given `0.2` by keyword or position, makes `self.T` a
    Python object as a literal does (`ops.cross_entropy` of what it scales fails,
    "DtypeToEnum"); never stored in `construct`, it compiles."""
    a = analyzer(ctx)
    cls = a.owner_class(func)
    return cls is not None and (a.number_attribute(cls, attr) or _given_numbers(cls, attr, ctx))


def _given_numbers(cls: ast.ClassDef, attr: str, ctx: Context) -> bool:
    """Is `self.<attr>` set from a constructor parameter, and is what each place building
    `cls` gives it (followed through names bound once), or its default, a number literal?"""
    given = constructed.sources(cls, attr, ctx, defaults=True)
    if not given:
        return False
    for e, where in given:
        made = constructed.built(e, where, ctx) if type(e) is ast.Name else e
        if not python_number(made):
            return False
    return True


def _number(v: ast.expr, target: str, ctx: Context, func: ast.AST) -> bool:
    """Is `v` a Python number by its syntax alone (`python_number`), where a number is also
    True / False, a number builtin's result, `min` / `max` of numbers, `self.<attr>` of the
    stored attribute itself (`target`, for `self.n = self.n + 1`) or of another attribute
    `__init__` sets to a number literal?"""

    seen: set[str] = set()

    def leaf(e: ast.expr) -> bool:
        t = type(e)
        if t is ast.Constant:
            return type(e.value) is bool  # type: ignore[attr-defined]
        if t is ast.Call:
            q = ctx.qualname(e.func) or ""  # type: ignore[attr-defined]
            if q in ("builtins.min", "builtins.max"):
                args = e.args  # type: ignore[attr-defined]
                return bool(args) and all(python_number(a, leaf) for a in args)
            return q in _NUMBER_BUILTINS or _random_number(e, q)  # type: ignore[arg-type]
        if t is ast.Subscript:
            # `ids.shape[1]`: an int while compiling, as a literal is
            return type(e.value) is ast.Attribute and e.value.attr == "shape"  # type: ignore[attr-defined]
        if t is ast.Name:
            return _shape_number(e.id, func, ctx, leaf, seen)  # type: ignore[attr-defined]
        return (
            t is ast.Attribute
            and type(e.value) is ast.Name  # type: ignore[attr-defined]
            and e.value.id == "self"  # type: ignore[attr-defined]
            and (e.attr == target or _number_attribute(e.attr, func, ctx))  # type: ignore[attr-defined]
        )

    return python_number(v, leaf)


def _random_number(call: ast.Call, q: str) -> bool:
    """A draw of Python's `random` module that gives a number (`random.randint(0, 2)`,
    `random.choice([0, 1])`, `random.choice(range(n))`): stored on `self` it makes the
    attribute a Python object as a number literal does (measured, written/heldout40c cases
    `proxyless_set_active_in_construct_random`, `r2_proxyless_set_active_random_choice_self`
    and probes `fix40e_rnd_self_*`: the attribute, also through a local, picking from a
    `CellList` fails, "Unsupported element type[unknown]"; unread or only scaling a tensor
    it compiles)."""
    from npu_lsp.rules.graphmode.python_random import random_numbers

    if q not in random_numbers():
        return False
    if q != "random.choice":
        return True
    population = call.args[0] if len(call.args) == 1 and not call.keywords else None
    if type(population) in (ast.List, ast.Tuple):
        return bool(population.elts) and all(python_number(x) for x in population.elts)  # type: ignore[union-attr]
    return type(population) is ast.Call and type(population.func) is ast.Name and population.func.id == "range"


def _shape_number(name: str, func: ast.AST, ctx: Context, leaf: Callable[[ast.expr], bool], seen: set[str]) -> bool:
    """Is the local `name` a number while compiling: bound once to one (`t = ids.shape[1]`,
    `n = t + 1`), or unpacked from a shape (`b, t = ids.shape`)? Measured (written/heldout26a
    case `kv_seen_tokens_counter_on_self`, probes `fix27a_seen_*`): `self.seen += t` with
    such a `t` makes `self.seen` a Python object as `self.seen += 1` does."""
    if name in seen:
        return False
    seen.add(name)
    a = analyzer(ctx)
    value = a.single_assignment(name, func)
    if value is not None:
        return python_number(value, leaf)
    value = a.single_unpacked(name, func)
    return type(value) is ast.Attribute and value.attr == "shape"


#: a store into an attribute of an object held on `self` (`self.cfg.ratio = ...`, `+=`)
_HELD_STORE = re.compile(r"self\.(?=(\w+))\1\.(?=(\w+))\2[ \t]*(?:[-+*/%]|//|\*\*)?=[^=]")


def stores_held_numbers(ctx: Context) -> bool:
    """Does compiled LAX code of this file store a number into an attribute of an object
    held on `self` and read it (`held_number_stored`)?"""
    if not _held_store_text(ctx):
        return False
    for s in lax_scopes(ctx):
        stored = _held_number_stores(s.function, ctx)
        if stored and any(
            type(n) is ast.Attribute
            and isinstance(n.ctx, ast.Load)
            and type(n.value) is ast.Attribute
            and (n.value.attr, n.attr) in stored
            for n in own_nodes(s.function)
        ):
            return True
    return False


def held_number_stored(e: ast.Attribute, func: ast.AST, ctx: Context) -> bool:
    """`self.<obj>.<attr>` read in a compiled function that stores a Python number there
    (`self.cfg.ratio = 0.5`, `self.cfg.ratio = self.cfg.ratio * 0.9`): LAX runs the store as
    a JIT Fallback `setattr` and reads the attribute back as a Python object, before or after
    the store (measured, written/heldout23a probes `lax24a_f64_cfg_*`: times `x`, given to
    `nn.GRUCell`, it fails, "got 'Tensor(shape=[-2], dtype=Float32)'"; storing another
    attribute of the object and reading this one compiles)."""
    inner = e.value
    if not (
        type(inner) is ast.Attribute
        and type(inner.value) is ast.Name
        and inner.value.id == "self"
    ):
        return False
    if not _held_store_text(ctx):
        return False
    return (inner.attr, e.attr) in _held_number_stores(func, ctx)


def _held_store_text(ctx: Context) -> bool:
    """Does the file's text match `_HELD_STORE` (once per file; flow's `self_store_text`,
    the search shared with the other stores on `self`, first)?"""
    hit = ctx.cache.get("opaque.held_store")
    if hit is None:
        hit = ctx.cache["opaque.held_store"] = self_store_text(ctx) and _HELD_STORE.search(ctx.text) is not None
    return bool(hit)


def _held_number_stores(func: ast.AST, ctx: Context) -> frozenset[tuple[str, str]]:
    """(obj, attr) of each `self.<obj>.<attr>` that `func` stores a number into (outside
    branches MindSpore folds away), once per function."""
    key = ("opaque.held_stores", id(func))
    found: frozenset[tuple[str, str]] | None = ctx.cache.get(key)
    if found is not None:
        return found
    pairs: set[tuple[str, str]] = set()
    for st in own_nodes(func):
        targets: list[ast.expr]
        if type(st) is ast.AugAssign:
            targets = [st.target]
        elif type(st) is ast.Assign:
            targets = st.targets
        else:
            continue
        for t in targets:
            if (
                type(t) is ast.Attribute
                and type(t.value) is ast.Attribute
                and type(t.value.value) is ast.Name
                and t.value.value.id == "self"
                and _held_number(st.value, t)
                and not in_dead_branch(ctx, func, ctx.span(st))
                # a `@jit_class` object's attributes are compiled (v4 seeds 9940187, 9960172,
                # 9980040: `self.cfg.scale = 3.0` then `x * self.cfg.scale` compile at LAX)
                and not analyzer(ctx).holds_jit_class(func, t.value.attr)
            ):
                pairs.add((t.value.attr, t.attr))
    found = ctx.cache[key] = frozenset(pairs)
    return found


def _held_number(v: ast.expr, read: ast.Attribute) -> bool:
    """Is `v` a Python number by its syntax alone (`python_number`), where the held
    attribute `read` (`self.<obj>.<attr>`) itself is a number too?"""
    obj = read.value.attr  # type: ignore[attr-defined]

    def leaf(e: ast.expr) -> bool:
        return (
            type(e) is ast.Attribute
            and e.attr == read.attr
            and type(e.value) is ast.Attribute
            and e.value.attr == obj
            and type(e.value.value) is ast.Name
            and e.value.value.id == "self"
        )

    return python_number(v, leaf)
