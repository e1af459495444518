"""MS182: state a called method sets on `self`, read back in compiled code as `__init__` left it."""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Callable, Iterable
from importlib import resources

from npu_lsp.astutil import node_key
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.constructed import init_of
from npu_lsp.rules.graphmode.flow import analyzer, python_number
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.values import instances


@rule(code="MS182", name="stale-self-state-read", severity="error", family="graphmode")
class StaleSelfStateRead(GraphRule):
    """## What it does
    Flags an attribute that is `None` in `__init__` and set by a method the compiled code
    calls (`self.scheduler.set_timesteps(n)`, `self.reset(n)`), then iterated, given to `len`,
    indexed, used in arithmetic (`x - self.data_min`, `-self.lo`) or asked for an attribute
    (`self.lo.mean()`, `self.lo.shape`) later in the same function (`for t in
    self.scheduler.timesteps`; `if self.data_min is None: self.fit(x)` then `(x -
    self.data_min) * scale`), or so read by another method of the same object that the
    function calls afterwards (RevIN: `self._get_statistics(x)` then `self._normalize(x)`,
    which computes `x - self.mean`). A read under an `is None` / `is not None` test of the
    attribute is not flagged: MindSpore folds the test on the stale None. An ordering
    comparison of the stale None (`self.v >= 1.0`) is flagged too. An attribute `__init__`
    sets to a Python number literal (`self.v = 0.0`) that such a method sets to a computed
    value (SpikingJelly's `neuronal_charge(x)`: `self.v =
    self.v + (x - self.v) / self.tau`) is flagged where the function then reads it as a
    tensor: an attribute of it (`self.v.shape`), an index, `len`, or a tensor method of its
    comparison with numbers (`(self.v >= self.v_th).astype(ms.float32)`, a Python bool; a
    number is a literal or an attribute `__init__` sets to one, or to a parameter whose
    number default every construction in the file keeps);
    arithmetic on the number compiles. (A list on `self` appended in compiled code and
    read back is MS185.)

    ## Why is this bad?
    The graph does not see state that a called method sets on an object held by `self`: the
    compiled function reads the attribute back as its `__init__` value, so compiling fails:
    `'none' object is not iterable`, `'NoneType' object has no attribute '__len__'`. (Set
    directly in `construct`, LAX reads the new value.) An attribute that `__init__` never
    sets at all, set only by the called method, fails the same way: `ClassMember: ... object
    has no attribute 'mean'` (RevIN's `_get_statistics`).

    ## Example
    ```python
    class Scheduler:
        def __init__(self):
            self.timesteps = None

        def set_timesteps(self, n):
            self.timesteps = list(range(n))


    class Pipeline(nn.Cell):
        def __init__(self):
            super().__init__()
            self.scheduler = Scheduler()

        def construct(self, x, n):
            self.scheduler.set_timesteps(n)
            for t in self.scheduler.timesteps:
                x = x * 0.9
            return x
    ```

    ## Use instead
    Set the state before calling the network (`pipe.scheduler.set_timesteps(10)`), or return
    the value from the method and use it directly.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: state changed on `self` in a graph is not seen.
    - Measured on MindSpore 2.10 (CPU): probes `self_attr_*` / `sched_*` in
      tests/npu_lsp/fixtures/written/generative/probes (a `None` attribute set by a method of
      the cell or of a cell or plain object it holds, then iterated or given to `len`:
      rejected at both levels; a list there, or the attribute set in `construct` itself or
      before the call, compiles under LAX); probes `st18_fit_*` in
      tests/npu_lsp/fixtures/written/heldout17b/probes (arithmetic on either side, unary
      `-`, `.mean()`, `.shape` of the stale None fail at both levels, "Failed calling sub
      with sub(None)", "bad operand type for unary -"; an `__init__` value of 0.0, a read
      before the call, the method's returned value, and a read guarded by `if self.lo is
      not None:` compile under LAX).
    - Attributes `__init__` never sets: written/zoo probes `ld23_na_*` and written/heldout23a
      `norm_revin_stats_stored_on_self` (read after the setting method: rejected at both
      levels; stored and read in `construct` itself, or set first by a Python call of the
      method: compiled under LAX); read by a method called afterwards: written/heldout34c
      `revin_stats_on_self_mode_string` and probes `fix34e_rv_helper_store*` (rejected at
      both levels, also with `self.mean = None` in `__init__`; a Tensor there compiles
      under LAX).
    - Number attributes: written/heldout41a cases `lif_reset_called_in_construct`,
      `r2_helper_method_sets_float_self_v` and probes `fix41a_helper_*` (`'Bool' object has
      no attribute 'astype'`, `'Float' object has no attribute 'shape'` at both levels;
      `x + self.v`, `ops.cast(self.v >= 1.0, ...)`, a read inside the setting method, a
      Tensor `__init__` value and a store in `construct` itself compile under LAX).
    """

    nodes = (ast.Call,)
    callee = (ast.Attribute,)  # `self.m(...)` / `self.h.m(...)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: only `self.m(...)` / `self.h.m(...)` go further
        assert type(node) is ast.Call
        f = node.func
        if type(f) is not ast.Attribute:
            return ()
        obj = f.value
        if type(obj) is ast.Attribute:
            obj = obj.value
        if type(obj) is not ast.Name or obj.id != "self":
            return ()
        return _set_by_method(self, node, f, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        return receiver == "self" or receiver == "self."  # `self.m(...)` / `self.h.m(...)` only

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        # `m` is a method of the owning class or of a module-level class held on `self`:
        # the methods of the module's classes, when no other class is written anywhere
        # (every `class` word of the text is one of theirs)
        classes = [c for c in ctx.tree.body if type(c) is ast.ClassDef]
        # invariant: every `class` statement of the tree is spelled by a `class` word of
        # `ctx.text`, so the count is at least the file's classes, and equals the
        # module-level ones only when no class is nested (test_definition_word_counts.py)
        counts = ctx.text_words()
        if counts is None or counts.get("class", 0) != len(classes):
            return None
        return frozenset(name for c in classes for name in _methods(c, ctx))


def _set_by_method(rule: StaleSelfStateRead, call: ast.Call, f: ast.Attribute, ctx: Context) -> Iterable[Diagnostic]:
    """`self.m(...)` / `self.h.m(...)` where method `m` sets `self.A` that `__init__` leaves
    None, and the compiled function then iterates, measures or indexes `<obj>.A`. (`()` on
    the early exits, not a generator: every `self.m(...)` of compiled code comes here.)"""
    obj = f.value
    func = ctx.function
    if func is None:
        return ()
    # the owning class and its methods once per function: every `self.m(...)` asks, and
    # most name a sub-cell, no method
    key = ("MS182.owner", id(func))
    hit: tuple[ast.ClassDef | None, dict[str, ast.FunctionDef]] | None = ctx.cache.get(key)
    if hit is None:
        found = analyzer(ctx).owner_class(func)
        hit = ctx.cache[key] = (found, _methods(found, ctx) if found is not None else {})
    owner, own_methods = hit
    if owner is None:
        return ()
    if type(obj) is ast.Name and obj.id == "self":
        method = own_methods.get(f.attr)
        if method is None or method is func:
            return ()
        return _reads_after(rule, call, f, obj, owner, method, func, ctx)
    elif isinstance(obj, ast.Attribute) and isinstance(obj.value, ast.Name) and obj.value.id == "self":
        cls = _held_class(owner, obj.attr, ctx)
    else:
        return ()
    if cls is None:
        return ()
    method = _methods(cls, ctx).get(f.attr)
    if method is None or method is func:
        return ()
    return _reads_after(rule, call, f, obj, cls, method, func, ctx)


def _reads_after(
    rule: StaleSelfStateRead,
    call: ast.Call,
    f: ast.Attribute,
    obj: ast.expr,
    cls: ast.ClassDef,
    method: ast.FunctionDef,
    func: ast.AST,
    ctx: Context,
) -> Iterable[Diagnostic]:
    for attr in _none_attrs_set(cls, method, ctx):
        read = _consumed_after(obj, attr, call, func) or _consumed_by_later_method(obj, attr, call, cls, method, func, ctx)
        if read is not None:
            yield ctx.diagnostic(
                rule,
                read,
                f"`{ast.unparse(obj)}.{attr}` is still None (its `__init__` value) here: `{f.attr}(...)` (line"
                f" {call.lineno}) sets it from compiled code, which the graph does not see; set it before"
                " calling the network, or return the value from the method",
            )
    for attr in _number_attrs_set(cls, method, ctx):
        read = _number_consumed_after(obj, attr, call, func, lambda a: _number_attr(cls, a, ctx), ctx)
        if read is not None:
            yield ctx.diagnostic(
                rule,
                read,
                f"`{ast.unparse(obj)}.{attr}` is still the Python number `__init__` gave it here: `{f.attr}(...)`"
                f" (line {call.lineno}) sets it from compiled code, which the graph does not see, so this reads"
                " a number, not a tensor (MindSpore: 'Bool' / 'Float' object has no attribute ...); start it as"
                " a Tensor in `__init__`, or return the value from the method",
            )
    for attr in _new_attrs_set(cls, method, func, ctx):
        read = _consumed_after(obj, attr, call, func) or _consumed_by_later_method(obj, attr, call, cls, method, func, ctx)
        if read is not None:
            yield ctx.diagnostic(
                rule,
                read,
                f"`{ast.unparse(obj)}.{attr}` does not exist when the graph is built: only `{f.attr}(...)` (line"
                f" {call.lineno}) sets it, from compiled code, which the graph does not see (MindSpore: object"
                f" has no attribute '{attr}'); set it in `__init__`, or return the value from the method",
            )


def _methods(cls: ast.ClassDef, ctx: Context) -> dict[str, ast.FunctionDef]:
    memo: dict[int, dict[str, ast.FunctionDef]] = ctx.cache.setdefault("MS182.methods", {})
    hit = memo.get(id(cls))
    if hit is None:
        hit = memo[id(cls)] = {m.name: m for m in cls.body if type(m) is ast.FunctionDef}
    return hit


def _none_attrs_set(cls: ast.ClassDef, method: ast.FunctionDef, ctx: Context) -> list[str]:
    """The attributes `method` sets that `cls.__init__` leaves None (once per method)."""
    memo: dict[int, list[str]] = ctx.cache.setdefault("MS182.none-set", {})
    hit = memo.get(id(method))
    if hit is None:
        init = analyzer(ctx).self_values(cls)
        # (a loop, not a generator per attribute: every method a compiled function calls
        # on `self` asks, and most `__init__` values are cells and primitives)
        nones: set[str] = set()
        constant_t = ast.Constant
        for a, vs in init.items():
            for v in vs:
                if type(v) is not constant_t or v.value is not None:
                    break
            else:
                if vs:
                    nones.add(a)
        hit = memo[id(method)] = sorted(_assigned_attrs(method) & nones) if nones else []
    return hit


def _number_attrs_set(cls: ast.ClassDef, method: ast.FunctionDef, ctx: Context) -> list[str]:
    """The attributes `method` sets to a computed value (not a constant) that `cls.__init__`
    leaves a Python number literal (`self.v = 0.0`, `self.n = 0`; once per method). A method
    that only puts a constant back (`reset(): self.v = 0.0`) changes nothing the graph could
    miss."""
    memo: dict[int, list[str]] = ctx.cache.setdefault("MS182.number-set", {})
    hit = memo.get(id(method))
    if hit is None:
        # the method's text first (a few lines): most store nothing `__init__` set to a
        # number literal; only then its statements
        init = analyzer(ctx).self_values(cls)
        text = "\n".join(ctx.lines[method.lineno - 1 : method.end_lineno or method.lineno])
        stored = {m.group(1) for m in _SELF_STORE.finditer(text)}
        literal = [
            a
            for a in sorted(stored)
            if init.get(a) and all(type(v) is ast.Constant and type(v.value) in (int, float, bool) for v in init[a])
        ]
        hit = memo[id(method)] = (
            [a for a in literal if a in _assigned_attrs(method) and _computed_store(method, a)] if literal else []
        )
    return hit


def _number_attr(cls: ast.ClassDef, attr: str, ctx: Context) -> bool:
    """Does `cls.__init__` set `self.<attr>` only to Python numbers? (Once per attribute.)"""
    memo: dict[tuple[int, str], bool] = ctx.cache.setdefault("MS182.numbers", {})
    key = (id(cls), attr)
    hit = memo.get(key)
    if hit is None:
        vs = analyzer(ctx).self_values(cls).get(attr) or []
        hit = memo[key] = bool(vs) and all(_number_value(v, cls, ctx) for v in vs)
    return hit


def _number_value(v: ast.expr | None, cls: ast.ClassDef, ctx: Context) -> bool:
    """Is `v`, an `__init__` value of `cls`, a Python number: a literal, or a parameter of
    `__init__` with a number default that every `cls(...)` of the file leaves out or gives a
    number literal (`self.v_th = v_th` with `v_th=1.0`)? Not for a class the file derives
    from (its subclasses pass their own values through `super().__init__`)."""
    if type(v) is ast.Constant:
        return type(v.value) in (int, float, bool)
    if type(v) is not ast.Name:
        return False
    init = init_of(cls)
    if init is None:
        return False
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    if v.id not in params:
        return False
    defaults = dict(zip([a.arg for a in init.args.args[len(init.args.args) - len(init.args.defaults) :]], init.args.defaults, strict=True))
    d = defaults.get(v.id)
    if d is None or not python_number(d):
        return False
    built = _constructions(cls, ctx)
    if built is None:
        return False
    index = params.index(v.id)
    for n in built:
        given = n.args[index] if index < len(n.args) else next((k.value for k in n.keywords if k.arg == v.id), None)
        if given is not None and not python_number(given):
            return False
    return True


def _constructions(cls: ast.ClassDef, ctx: Context) -> list[ast.Call] | None:
    """The `cls(...)` calls of the file, or None when the file derives a class from `cls` or
    a call spreads `*args` / `**kwargs` (once per class, one walk of the file)."""
    memo: dict[int, list[ast.Call] | None] = ctx.cache.setdefault("MS182.built", {})
    if id(cls) in memo:
        return memo[id(cls)]
    found: list[ast.Call] = []
    out: list[ast.Call] | None = found
    for n in ast.walk(ctx.tree):
        if type(n) is ast.ClassDef and any(type(b) is ast.Name and b.id == cls.name for b in n.bases):
            out = None
            break
        if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id == cls.name:
            if any(type(a) is ast.Starred for a in n.args) or any(k.arg is None for k in n.keywords):
                out = None
                break
            found.append(n)
    memo[id(cls)] = out
    return out


def _computed_store(method: ast.FunctionDef, attr: str) -> bool:
    """Does `method` store something other than a constant into `self.<attr>`?"""
    for n in own_nodes(method):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(
                isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name) and t.value.id == "self"
                for t in targets
            ) and not isinstance(n.value, ast.Constant):
                return True
    return False


def _number_consumed_after(
    obj: ast.expr, attr: str, call: ast.Call, func: ast.AST, number: Callable[[str], bool], ctx: Context
) -> ast.AST | None:
    """The first read after `call` in `func` of `<obj>.<attr>`, still the Python number
    `__init__` gave it, that only a tensor supports: an attribute of it (`self.v.shape`), an
    index, `len`, iteration, or a tensor method of its comparison with numbers
    (`(self.v >= self.v_th).astype(ms.float32)`: a Python bool). Reads after `func` stores
    the attribute itself are left out (LAX reads that store). Measured (written/heldout41a
    cases `lif_reset_called_in_construct`, `r2_helper_method_sets_float_self_v`, probes
    `fix41a_helper_*`): "'Bool' object has no attribute 'astype'", "'Float' object has no
    attribute 'shape'" at LAX and STRICT; arithmetic on it, `ops.cast(self.v >= 1.0, ...)`,
    the read inside the setting method itself, and a Tensor `__init__` value compile at LAX."""
    want = node_key(obj)
    aliases: set[str] = set()

    def read(e: ast.expr) -> bool:
        return isinstance(e, ast.Attribute) and e.attr == attr and node_key(e.value) == want

    def same(e: ast.expr) -> bool:
        return read(e) or (type(e) is ast.Name and e.id in aliases and type(e.ctx) is ast.Load)

    def numeric(e: ast.expr) -> bool:
        # a number constant, or an attribute of the object `__init__` left a number (`self.v_th`)
        if isinstance(e, ast.Constant):
            return type(e.value) in (int, float)
        if type(e) is ast.Name:
            return e.id in aliases
        return isinstance(e, ast.Attribute) and node_key(e.value) == want and (e.attr == attr or number(e.attr))

    at = (call.lineno, call.col_offset)
    nodes = sorted(
        (n for n in own_nodes(func) if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) > at),
        key=lambda n: (n.lineno, n.col_offset),  # type: ignore[attr-defined]
    )
    stored = min(
        ((n.lineno, n.col_offset) for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and read(n)),
        default=None,
    )
    # `v = self.v` after the call (and before any store of the attribute): a local copy of
    # the same number (measured, written/heldout41a probe
    # `fix41a_helper_float_v_assign_then_read_next_line`: `(v >= 1.0).astype(...)` fails as
    # `(self.v >= 1.0).astype(...)` does); only a name bound once in the function
    a = analyzer(ctx)
    for n in nodes:
        if stored is not None and (n.lineno, n.col_offset) >= stored:  # type: ignore[attr-defined]
            break
        if (
            type(n) is ast.Assign
            and len(n.targets) == 1
            and type(n.targets[0]) is ast.Name
            and read(n.value)
            and a.single_assignment(n.targets[0].id, func) is n.value
        ):
            aliases.add(n.targets[0].id)
    for n in nodes:
        pos = (n.lineno, n.col_offset)  # type: ignore[attr-defined]
        if stored is not None and pos >= stored:
            break
        if isinstance(n, ast.For) and same(n.iter):
            return n.iter
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args and same(n.args[0]):
            return n
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and same(n.value):
            return n
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            base = n.value
            if same(base):
                return n
            if (
                isinstance(base, ast.Compare)
                and any(same(x) for x in (base.left, *base.comparators))
                and all(numeric(x) for x in (base.left, *base.comparators))
            ):
                return n
    return None


def _new_attrs_set(cls: ast.ClassDef, method: ast.FunctionDef, func: ast.AST, ctx: Context) -> list[str]:
    """The attributes `method` sets on `self` that nothing else gives the object: not
    `__init__` (nor a base's in this file), not the class body, not a Cell's own attributes,
    and no store of the name anywhere else in the file (`func`, the caller, stores none
    either). A base class from another module may set anything: then none. Once per method;
    the whole-file questions only for a method that sets such an attribute at all."""
    memo: dict[int, list[str]] = ctx.cache.setdefault("MS182.new-set", {})
    hit = memo.get(id(method))
    if hit is not None:
        return hit
    memo[id(method)] = []
    init = analyzer(ctx).self_values(cls)
    body = {
        t.id
        for st in cls.body
        if (type(st) is ast.Assign or type(st) is ast.AnnAssign)
        for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
        if isinstance(t, ast.Name)
    }
    # the method's text first (literal-led, a few lines): most set nothing new on `self`
    text = "\n".join(ctx.lines[method.lineno - 1 : method.end_lineno or method.lineno])
    stored = {m.group(1) for m in _SELF_STORE.finditer(text)}
    if not any(a not in init and a not in body for a in stored):
        return []
    candidates = sorted(a for a in _assigned_attrs(method) if a not in init and a not in body and a not in _cell_attributes())
    if not candidates or not all(
        (ctx.qualname(b) or "") in _CELL_BASES or (isinstance(b, ast.Name) and b.id in ctx.scopes.info.classes)
        for b in cls.bases
    ):
        return []
    # Python may run the method before the graph is built: called outside the class
    # (`net.fit(x)`) or by `__init__` (`self._set_cos_sin_cache(n)`, HF RoPE)
    lo, hi = cls.lineno, cls.end_lineno or cls.lineno
    init_fn = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    i_lo, i_hi = (init_fn.lineno, init_fn.end_lineno or init_fn.lineno) if init_fn is not None else (0, -1)
    called = f".{method.name}("
    if any(called in line for i, line in enumerate(ctx.lines, 1) if not lo <= i <= hi or i_lo <= i <= i_hi):
        return []
    inst = instances(ctx)
    if inst.attr_stores(candidates[0]) is None:
        return []  # a `setattr` of an unknown name may set any of them
    hit = memo[id(method)] = [a for a in candidates if all(_inside(st, method) for st in inst.attr_stores(a) or ())]
    return hit


def _inside(node: ast.AST, func: ast.FunctionDef) -> bool:
    line = getattr(node, "lineno", 0)
    return func.lineno <= line <= (func.end_lineno or func.lineno)


#: the comparisons None does not support
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)

#: `self.<name> =` (also `self.a, self.b = ...` for its first name): a superset of the stores
_SELF_STORE = re.compile(r"self\.(\w+)[ \t]*[,=]")

#: the bases whose instances hold nothing but a Cell's own attributes before `__init__`
_CELL_BASES = frozenset({"mindspore.nn.Cell", "mindspore.nn.cell.Cell"})


@functools.cache
def _cell_attributes() -> frozenset[str]:
    text = resources.files(__package__).joinpath("ms_cell_attributes.json").read_text("utf-8")
    return frozenset(json.loads(text)["attributes"])


def _held_class(owner: ast.ClassDef, attr: str, ctx: Context) -> ast.ClassDef | None:
    """The class of this module built into `self.<attr>` by `owner`'s `__init__`."""
    values = analyzer(ctx).self_values(owner).get(attr) or []
    if len(values) != 1 or not isinstance(values[0], ast.Call) or not isinstance(values[0].func, ast.Name):
        return None
    name = values[0].func.id
    return next((c for c in ctx.tree.body if isinstance(c, ast.ClassDef) and c.name == name), None)


def _assigned_attrs(method: ast.FunctionDef) -> set[str]:
    """`self.<attr> = ...` targets directly in `method` (not in nested functions)."""
    out: set[str] = set()
    for n in own_nodes(method):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.add(t.attr)
    return out


def _consumed_by_later_method(
    obj: ast.expr,
    attr: str,
    call: ast.Call,
    cls: ast.ClassDef,
    method: ast.FunctionDef,
    func: ast.AST,
    ctx: Context,
) -> ast.AST | None:
    """The first read `_consumed_after` means of `self.<attr>` in another method of `cls`
    that `func` calls on the same object after `call` (RevIN: `self._get_statistics(x)`
    then `x = self._normalize(x)`, which computes `x - self.mean`): that method's graph
    reads the attribute from the Python object too (measured, written/heldout34c case
    `revin_stats_on_self_mode_string` and probes `fix34e_rv_helper_store*`: "object has no
    attribute 'mean'", with `self.mean = None` in `__init__` "sub(None)", at LAX and STRICT;
    a Tensor set in `__init__` compiles at LAX)."""
    want = node_key(obj)
    methods = _methods(cls, ctx)
    at = (call.lineno, call.col_offset)
    calls = [
        n for n in own_nodes(func)
        if type(n) is ast.Call and type(n.func) is ast.Attribute and (n.lineno, n.col_offset) > at
    ]
    for n in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        assert isinstance(n.func, ast.Attribute)
        later = methods.get(n.func.attr)
        if later is None or later is method or later is func or node_key(n.func.value) != want:
            continue
        if _assigned_attrs(later) & {attr}:
            continue  # it sets the attribute itself first, maybe
        self_name = ast.Name(id="self", ctx=ast.Load())
        read = _consumed_after(self_name, attr, later, later)
        if read is not None:
            return read
    return None


def _consumed_after(obj: ast.expr, attr: str, call: ast.AST, func: ast.AST) -> ast.AST | None:
    """The first iteration, `len`, index, arithmetic operand or attribute read of
    `<obj>.<attr>` after `call` in `func` (an `is None` test, a comparison or a call argument
    is not one), outside a branch guarded by an `is None` / `is not None` test of it (which
    MindSpore folds on the stale None, compiling only the side that does not read it)."""
    want = node_key(obj)

    def same(e: ast.expr) -> bool:
        return isinstance(e, ast.Attribute) and e.attr == attr and node_key(e.value) == want

    found: list[ast.AST] = []
    guarded: list[tuple[int, int]] = []
    for n in own_nodes(func):
        if isinstance(n, (ast.If, ast.IfExp, ast.While)) and any(
            isinstance(c, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in c.ops)
            and any(same(x) for x in (c.left, *c.comparators))
            for c in ast.walk(n.test)
        ):
            guarded.append((n.lineno, n.end_lineno or n.lineno))
        if (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) <= (getattr(call, "lineno", 0), getattr(call, "col_offset", 0)):
            continue
        if isinstance(n, ast.For):
            hit: ast.AST | None = n.iter if same(n.iter) else None
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args:
            hit = n if same(n.args[0]) else None
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
            hit = n if same(n.value) else None
        elif isinstance(n, ast.BinOp):
            # `x - self.lo`, `self.hi * x`: arithmetic on None (measured: "Failed calling sub
            # with sub(None)", "mul(None)"); `"%s" % self.lo` formats None and is left out
            fmt = isinstance(n.op, ast.Mod) and isinstance(n.left, (ast.Constant, ast.JoinedStr))
            hit = n if not fmt and (same(n.left) or same(n.right)) else None
        elif isinstance(n, ast.UnaryOp) and not isinstance(n.op, ast.Not):
            hit = n if same(n.operand) else None  # `-self.lo`: "bad operand type for unary -"
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            hit = n if same(n.value) else None  # `self.lo.mean()`, `self.lo.shape`
        elif isinstance(n, ast.Compare) and any(isinstance(op, _ORDERING) for op in n.ops):
            # `self.v >= 1.0` on the stale None (measured, written/heldout41a probe
            # `fix41a_helper_none_v_astype`: "'>=' not supported between instances of
            # 'NoneType' and 'float'" at LAX and STRICT); `==` / `is` compare None fine
            hit = n if any(same(x) for x in (n.left, *n.comparators)) else None
        else:
            hit = None
        if hit is not None:
            found.append(hit)
    found = [h for h in found if not any(a <= h.lineno <= b for a, b in guarded)]  # type: ignore[attr-defined]
    return min(found, key=lambda h: (h.lineno, h.col_offset), default=None)  # type: ignore[attr-defined]
