"""Stores on `self` in compiled LAX code that make the attribute a Python object: LAX runs such
a store as a JIT Fallback `setattr`, and reads the attribute back as what Python holds. Here:
the indexes of a function's stores on `self` (all, and those under an `if`), a read after a
store under an `if`, and a plain Tensor attribute `__init__` builds and the function stores
again. Numbers stored on `self` are `number_stores`'."""

from __future__ import annotations

import ast
import re
from collections import Counter

from npu_lsp.astutil import COMPREHENSIONS, STATEMENT_BLOCKS
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.flow import analyzer, helper_makes_tensor, makes_tensor
from npu_lsp.rules.graphmode.values import in_dead_branch
from npu_lsp.scope import GraphScope

_SELF_STORES_MEMO = "_ascend_lens_self_stores"
#: attribute of a function's node holding its `object_stores`
_OBJECT_STORES_MEMO = "_ascend_lens_object_stores"


class _Clauses:
    """Marks on the walk's stack around a `try`'s `except` clauses and a `match`'s cases."""


_ENTER, _LEAVE = _Clauses(), _Clauses()
#: statements whose blocks hold `except` clauses or `case`s (`STATEMENT_BLOCKS` fields)
_CLAUSED = frozenset(t for t, blocks in STATEMENT_BLOCKS.items() if "handlers" in blocks or "cases" in blocks)


def self_stores(func: ast.AST) -> dict[str, list[ast.stmt]]:
    """`self.<attr>` -> the statements of `func` (nested blocks included, nested functions
    not) that store it (`self.n = v`, `self.n += v`, also as an item of a tuple or list
    target: `out, self.h = self.gru(x, self.h)`), kept on its node. Statements only."""
    kept = getattr(func, "__dict__", None)
    found = kept.get(_SELF_STORES_MEMO) if kept is not None else None
    if found is not None:
        return found
    return _index_stores(func, kept)[0]


def object_stores(func: ast.AST) -> dict[tuple[str, str], list[ast.Assign]]:
    """(`name`, `attr`) -> the plain assignments `name.attr = v` of `func` (`self` left out:
    its stores are `self_stores`'; not an item of a tuple target, not `+=`, not in an
    `except` clause or a `case`), kept on its node. Statements only."""
    kept = getattr(func, "__dict__", None)
    found = kept.get(_OBJECT_STORES_MEMO) if kept is not None else None
    if found is not None:
        return found
    return _index_stores(func, kept)[1]


def _index_stores(
    func: ast.AST, kept: dict[str, object] | None
) -> tuple[dict[str, list[ast.stmt]], dict[tuple[str, str], list[ast.Assign]]]:
    """`self_stores` and `object_stores` of `func` in one walk of its statements (each the
    walk its reader made before, in the same order: `object_stores` leaves out what sits in
    an `except` clause or a `case`, marked on the stack), kept on its node."""
    own: dict[str, list[ast.stmt]] = {}
    objects: dict[tuple[str, str], list[ast.Assign]] = {}
    clauses = 0  # inside an `except` clause or a `case`
    stack: list[object] = list(getattr(func, "body", ()))
    while stack:
        node = stack.pop()
        t = type(node)
        blocks = STATEMENT_BLOCKS.get(t)  # type: ignore[arg-type]
        if blocks is not None:
            if t in _CLAUSED:
                for block in blocks:
                    if block == "handlers" or block == "cases":
                        stack.append(_LEAVE)
                        stack.extend(getattr(node, block))
                        stack.append(_ENTER)
                    else:
                        stack.extend(getattr(node, block))
            else:
                for block in blocks:
                    stack.extend(getattr(node, block))
            continue
        if t is ast.Assign:
            items: list[ast.expr] | None = None
            for target in node.targets:  # type: ignore[attr-defined]
                tt = type(target)
                if tt is ast.Attribute:
                    value = target.value
                    if type(value) is ast.Name:
                        if value.id == "self":
                            own.setdefault(target.attr, []).append(node)  # type: ignore[arg-type]
                        elif not clauses:
                            objects.setdefault((value.id, target.attr), []).append(node)  # type: ignore[arg-type]
                elif tt is ast.Tuple or tt is ast.List:
                    items = [*(items or ()), target]
            if items is not None:
                _tuple_self_stores(items, node, own)  # type: ignore[arg-type]
        elif t is ast.AugAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                own.setdefault(target.attr, []).append(node)  # type: ignore[arg-type]
        elif node is _ENTER:
            clauses += 1
        elif node is _LEAVE:
            clauses -= 1
    if kept is not None:
        kept[_SELF_STORES_MEMO] = own
        kept[_OBJECT_STORES_MEMO] = objects
    return own, objects


def _tuple_self_stores(targets: list[ast.expr], node: ast.stmt, own: dict[str, list[ast.stmt]]) -> None:
    """The stores on `self` among the items of tuple or list targets (nested ones too):
    measured (written/heldout23a probes `lax24a_hid_*`), an item of a tuple or list target
    is stored as a plain target is, at LAX and STRICT."""
    for target in targets:  # (items of nested tuples join the list)
        if type(target) is ast.Tuple or type(target) is ast.List:
            targets.extend(e.value if type(e) is ast.Starred else e for e in target.elts)
        elif type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
            own.setdefault(target.attr, []).append(node)


#: attribute of a function's node holding its `branch_stores`
_BRANCH_MEMO = "_ascend_lens_branch_stores"


def nested_self_lines(ctx: Context) -> bool:
    """Does a line of the text start with `self.` indented three levels or more (a store in
    a block of a method)? Without one no method stores `self.<attr>` inside an `if` (spaces
    or tabs; a plain substring search, cheaper than a walk of every compiled function, once
    per file: every attribute read asks)."""
    hit: bool | None = ctx.cache.get("opaque.nested_self")
    if hit is None:
        text = ctx.text
        # (a tab looked for first: a one-character search is a `memchr`, several times
        # cheaper than one for a longer string, and most texts have no tab)
        hit = ctx.cache["opaque.nested_self"] = " " * 12 + "self." in text or (
            "\t" in text and "\t\t\tself." in text
        )
    return hit


def branch_stores(func: ast.AST) -> dict[str, list[tuple[ast.If, ast.stmt]]]:
    """`self.<attr>` -> (the `if`, the store) for each store of `self.<attr>` inside an `if`
    statement of `func` (every enclosing `if`), kept on its node. Statements only: cheap."""
    kept = getattr(func, "__dict__", None)
    found = kept.get(_BRANCH_MEMO) if kept is not None else None
    if found is not None:
        return found
    found = {}
    stack: list[tuple[ast.AST, tuple[ast.If, ...]]] = [(st, ()) for st in getattr(func, "body", ())]
    while stack:
        node, ifs = stack.pop()
        t = type(node)
        blocks = STATEMENT_BLOCKS.get(t)
        if blocks is not None:
            inner: tuple[ast.If, ...] = (*ifs, node) if isinstance(node, ast.If) else ifs
            for block in blocks:
                stack.extend((st, inner) for st in getattr(node, block))
            continue
        if not ifs:
            continue
        if t is ast.Assign:
            targets = node.targets  # type: ignore[attr-defined]
        elif t is ast.AugAssign or t is ast.AnnAssign:
            targets = [node.target]  # type: ignore[attr-defined]
        else:
            continue
        for target in targets:
            if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                found.setdefault(target.attr, []).extend((i, node) for i in ifs)
    if kept is not None:
        kept[_BRANCH_MEMO] = found
    return found


def branch_stored(e: ast.Attribute, func: ast.AST, ctx: Context) -> bool:
    """`self.m` read after an `if` of the same function that stores `self.m`: LAX runs
    the store as a JIT Fallback `setattr`, and after the branches join the attribute is
    a Python object, whatever the test is (measured, written/heldout16b probes
    `ls17_sa_*`, `ls17_sb_*`, `ls17_sc_*`: `if self.m is None: self.m = ...`, `if
    self.flag:`, `if new:` with `new` a constant argument, both branches storing, in a
    sub-cell whose product the caller uses; given to `nn.Dense` it fails, "'int' object has
    no attribute '__len__'"; a store outside any `if`, or in a branch MindSpore folds away
    (`if self.m is None` with `self.m` a tensor), compiles).

    Not when `__init__` makes `self.m` a Parameter: MindSpore's parser turns a store to a Parameter attribute
    into a graph `Assign`, not a Python `setattr`, and the read after the join is the
    Parameter (measured, written/zoo14 probes `z19_param_*` and written/zoo probes
    `z22_param_*`: stored under a constant flag, a constant argument, a tensor condition or
    in both branches, then given to `nn.Dense` / `nn.LayerNorm`, compiles at LAX and STRICT;
    the Tensor twins `z19_tensor_attr_cast_store_branch_on_table_read`,
    `z22_tensor_ctor_arg_store_then_dense` fail). A Parameter given to the constructor
    (`z22_param_ctor_arg_store_then_dense`) counts when every place building the Cell
    passes one (`_given_parameters`); "may hold a Parameter" for any attribute of another
    object (`config.max_position_embeddings`) turned mindone's dynamic-RoPE
    `self.max_seq_len_cached` stores into false MS119 at LAX."""
    if not (isinstance(e.value, ast.Name) and e.value.id == "self") or not nested_self_lines(ctx):
        return False
    stores = branch_stores(func).get(e.attr)
    if not stores:
        return False
    a = analyzer(ctx)
    owner = a.owner_class(func)
    if e.attr in a.self_info(owner).parameters or _given_parameters(owner, e.attr, ctx):
        return False
    at = (e.lineno, e.col_offset)
    return any(
        (i.end_lineno or 0, i.end_col_offset or 0) <= at
        and not in_dead_branch(ctx, func, ctx.span(st))
        and not _other_branch(st, at, [j for j, s in stores if s is st], func)
        for i, st in stores
    )


def _block_holds(block: list[ast.stmt], at: tuple[int, int]) -> bool:
    """Does the statement list `block` span the position `at`?"""
    return bool(block) and (block[0].lineno, block[0].col_offset) <= at <= (
        block[-1].end_lineno or 0,
        block[-1].end_col_offset or 0,
    )


def _other_branch(st: ast.stmt, at: tuple[int, int], ifs: list[ast.If], func: ast.AST) -> bool:
    """Is the read at `at` in the other branch of an `if` (of `ifs`, those enclosing the store
    `st`) than the store, with no loop of `func` around that `if`? No run passes the store
    before the read then: `if self.c is None: ... self.c = x` / `else: x = self.c` reads
    what `__init__` set (measured, written/heldout33a case `gnn_sgc_precompute_cache_on_self`
    and probes `fix33e_sc_*`: the `else` read given to `nn.Dense` compiles at LAX; a read
    after the `if`, or in a loop's next pass, is the Python object)."""
    st_at = (st.lineno, st.col_offset)
    for j in ifs:
        if not _block_holds([j], at):
            continue
        if _block_holds(j.body, st_at) != _block_holds(j.body, at) and not _looped(j, func):
            return True
    return False


def _looped(node: ast.stmt, func: ast.AST) -> bool:
    """Is `node` inside a `for` / `while` loop of `func` (nested functions not)?"""
    at = (node.lineno, node.col_offset)
    stack: list[ast.AST] = list(getattr(func, "body", ()))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and _block_holds([n], at):
            return True
        blocks = STATEMENT_BLOCKS.get(type(n))
        if blocks is not None:
            for block in blocks:
                stack.extend(getattr(n, block))
    return False


def _given_parameters(cls: ast.ClassDef | None, attr: str, ctx: Context) -> bool:
    """Does `__init__` set `self.<attr>` only from what every place building `cls` gives it,
    each a `Parameter(...)` (inline or through the name bound to it)?"""
    if cls is None:
        return False
    given = constructed.sources(cls, attr, ctx)
    if not given:
        return False
    for e, where in given:
        made = constructed.built(e, where, ctx) if isinstance(e, ast.Name) else e
        if not (isinstance(made, ast.Call) and (ctx.qualname(made.func) or "").rsplit(".", 1)[-1] == "Parameter"):
            return False
    return True


def _tensor_call(v: ast.expr | None, ctx: Context) -> bool:
    """`Tensor(...)` or a lower-case function making a tensor (`ops.zeros`, `ms.tensor`)."""
    if type(v) is not ast.Call:
        return False
    # the spelling first: cells and primitives (`nn.Dense(...)`, `ops.ReduceSum()`), most
    # `__init__` calls, are capitalised and never resolved here
    f = v.func
    name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
    return (name == "Tensor" or name[:1].islower()) and (makes_tensor(ctx.qualname(f) or "") or helper_makes_tensor(ctx, v))


def _numpy_call(v: ast.expr | None, ctx: Context) -> bool:
    """`np.zeros(...)`, `np.array(...)`: a call of a numpy function (lower case)."""
    if type(v) is not ast.Call:
        return False
    f = v.func
    return type(f) is ast.Attribute and f.attr[:1].islower() and (ctx.qualname(f) or "").startswith("numpy.")


def numpy_attr(cls: ast.ClassDef | None, attr: str, ctx: Context) -> bool:
    """Does every `__init__` store of `self.<attr>` in `cls` make a numpy array? Stored again
    by a compiled LAX function, it is read as a Python object as a plain Tensor attribute is
    (measured, written/lax probes `fix33a_jn_prev_array_attr`, `fix33a_np_*`: `x = x +
    ms.Tensor(self.prev0) * 0` then `self.prev0 = x.asnumpy()` leaves `x` a JIT Fallback
    value, which joins with a bool; without the store `Tensor(self.prev0)` is a graph
    constant, `fix33a_jn_array_attr_no_store`)."""
    if cls is None:
        return False
    values = analyzer(ctx).self_values(cls).get(attr, [])
    return bool(values) and all(_numpy_call(v, ctx) for v in values)


def given_tensors(cls: ast.ClassDef | None, attr: str, ctx: Context) -> bool:
    """Does `__init__` set `self.<attr>` from a constructor parameter that every place building
    `cls` gives a tensor (`QueueLoss(T=Tensor(0.1, ms.float32))` with `self.T = T`)? A plain
    Tensor attribute as one `__init__` builds (measured, written/heldout27a probe
    `fix28b_nd_passed_tensor`: `self.T = self.T + 0.0` in `construct` then
    `ops.cross_entropy` of what it scales fails, "DtypeToEnum")."""
    if cls is None:
        return False
    given = constructed.sources(cls, attr, ctx, defaults=True)
    if not given:
        return False
    return all(_tensor_call(constructed.built(e, where, ctx) if type(e) is ast.Name else e, ctx) for e, where in given)


def restored_tensor_attrs(ctx: Context) -> frozenset[str]:
    """The plain Tensor attributes some `__init__` of the file builds whose name the text
    stores more than once (`self.m = ...` / `self.m, ... =` / `, self.m =`): the only ones a
    compiled function can store again. Once per file, from the classes' `__init__` facts."""
    hit: frozenset[str] | None = ctx.cache.get("opaque.restored_tensors")
    if hit is None:
        a = analyzer(ctx)
        text = ctx.text
        # the names first (`__init__`'s values, already indexed), by flow's notion of a
        # tensor maker (`Tensor(...)`, any `ops.*`: `ops.arange`, `ops.linspace`); `self_info`
        # decides later, for the few that pass, per class
        names: set[str] = set()
        counted: dict[str, bool] = {}

        def twice(attr: str) -> bool:
            # three scans of the whole text per name: once per name, not per class using it
            seen = counted.get(attr)
            if seen is None:
                seen = counted[attr] = _stored_twice(attr, text)
            return seen

        for c in ctx.scopes.info.classes.values():
            for attr, values in a.self_values(c.node).items():
                # one plain loop with the spelling tested inline: it sees every value every
                # `__init__` stores, nearly all of them cells and primitives (`nn.Dense(...)`)
                passed = False
                for v in values:
                    t = type(v)
                    if t is ast.Call:
                        f = v.func  # type: ignore[union-attr]
                        name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
                        if (name == "Tensor" or name[:1].islower()) and (_tensor_call(v, ctx) or _numpy_call(v, ctx)):
                            names.add(attr)
                            break
                    elif t is ast.Name or t is ast.IfExp:
                        passed = True
                else:
                    if passed and twice(attr) and given_tensors(c.node, attr, ctx):
                        names.add(attr)
        hit = ctx.cache["opaque.restored_tensors"] = frozenset(n for n in names if twice(n))
    return hit


def state_attrs(ctx: Context) -> frozenset[str]:
    """Attributes some `__init__` of the file sets only to `None` or a tuple display (an RNN
    state: `self.state = None`, `self.state = (h0, c0)`): a compiled LAX function that stores
    them again reads them back by JIT Fallback (see `state_attr`). Once per file, from the
    classes' `__init__` facts and one scan of the text for stores on `self`."""
    hit: frozenset[str] | None = ctx.cache.get("opaque.state_attrs")
    if hit is None:
        a = analyzer(ctx)
        names = {
            attr
            for c in ctx.scopes.info.classes.values()
            for attr, values in a.self_values(c.node).items()
            if values and all(_state_init_value(v) for v in values)
        }
        if names:
            # stored more than once in the text (`__init__` and compiled code): one pass
            counts = Counter(m.group(1) or m.group(2) for m in _SELF_STORE_NAME.finditer(ctx.text))
            names = {n for n in names if counts[n] >= 2}
        hit = ctx.cache["opaque.state_attrs"] = frozenset(names)
    return hit


#: `self.<name> =` / `self.<name> +=` / `self.<name>, ... =` / `..., self.<name> =`: a store's spelling
_SELF_STORE_NAME = re.compile(r"self\.(\w+)[ \t]*(?:,|(?:[-+*/%@&|^]|//|\*\*)?=(?!=))|,[ \t]*self\.(\w+)")


def stores_state_attrs(ctx: Context, lax: list[GraphScope]) -> bool:
    """Does compiled LAX code store a state attribute (`state_attr`) of its own class? Only
    functions whose text looks like a store on `self` are walked."""
    names = state_attrs(ctx)
    if not names:
        return False
    a = analyzer(ctx)
    for s in lax:
        if not _may_store_on_self(s.function, ctx):
            continue
        stored = names & self_stores(s.function).keys()
        if stored and any(state_attr(a.owner_class(s.function), attr, ctx) for attr in stored):
            return True
    return False


def _state_init_value(v: ast.expr | None) -> bool:
    return (type(v) is ast.Constant and v.value is None) or type(v) is ast.Tuple


def state_attr(cls: ast.ClassDef | None, attr: str, ctx: Context) -> bool:
    """Does every `__init__` store of `self.<attr>` in `cls` make it `None` or a tuple? Stored
    again by a compiled LAX function (outside a branch MindSpore folds away), a read before
    the first store, or after a store of a tuple, is a JIT Fallback object of unknown type
    and shape (measured on 2.10, written/heldout42c `rnn_lstm_hidden_cached_on_self`,
    `r2_rnn_state_zeros_tuple_init_cached`, probes `fix42c_hx_*`: `out, state =
    self.lstm(x, self.state); self.state = state` fails, "For 'LSTM', the 'hx' must be
    Tuple, but got Tensor[Float64]", also with `self.state = (zeros, zeros)` stored first;
    `h0, c0 = self.state` given to it: "negative dimensions are not allowed"; `self.dense(
    self.state[0])`: "'int' object is not subscriptable"; `out + self.state[0]` compiles,
    and so does the store under `if self.training:` of a cell left in eval mode)."""
    if cls is None:
        return False
    values = analyzer(ctx).self_values(cls).get(attr, [])
    return bool(values) and all(_state_init_value(v) for v in values)


def _stored_twice(attr: str, text: str) -> bool:
    return text.count(f"self.{attr} =") + text.count(f"self.{attr},") + text.count(f", self.{attr}") >= 2


def stores_tensor_attrs(ctx: Context, lax: list[GraphScope]) -> bool:
    """Does compiled LAX code store a plain Tensor attribute `__init__` builds (see
    `opaque_value_query._Opaque._tensor_attr_stored`)? The classes' `__init__` facts first: most hold none."""
    restored = restored_tensor_attrs(ctx)
    if not restored:
        return False
    a = analyzer(ctx)
    for s in lax:
        owner = a.owner_class(s.function)
        if owner is None:
            continue
        tensors = a.self_info(owner).tensors & restored
        given = {attr for attr in restored - tensors if given_tensors(owner, attr, ctx) or numpy_attr(owner, attr, ctx)}
        if (tensors or given) and any(attr in tensors | given for attr in self_stores(s.function)):
            return True
    return False


class _Join:
    """The outcome of `reaching_store` when the read is in a block MindSpore reaches by a join."""


#: `reaching_store`: no store reaches the read inside one block; the read is a JIT Fallback object
ACROSS_JOIN = _Join()
#: loops: their body starts at the loop's header, which joins the way in and the next pass
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
#: expressions MindSpore compiles as graphs of their own (a comprehension's first iterable is
#: evaluated outside it)


def reaching_store(e: ast.Attribute, func: ast.AST, stores: list[ast.stmt], ctx: Context) -> ast.stmt | _Join | None:
    """Which of `stores` (statements of `func` storing `self.<attr>`) gives the read `e` of
    `self.<attr>` its value, following MindSpore's parser: under LAX a store on `self` is a
    JIT Fallback `setattr` and the parser remembers the value stored as a variable of the
    block; a read finds it in its own block or, up through blocks with one way in, in the
    block of an enclosing `if` (before the `if`). A join has no such variable: the block
    after an `if` (folded or not, storing or not), a loop's body (its header joins the way
    in with the next pass), the block after a loop, and a comprehension (a graph of its
    own) read the attribute by a run-time `getattr`, a Python object of unknown shape
    (measured, written/heldout38b probes `fix40a_st_*`, `fix40a_st2_*`: `self.h = x`, then
    `self.dense(self.h)` in a `for` / `while` body, after an `if` on a tensor, a shape or a
    constant flag, after a loop, or in a comprehension fails at LAX, "'int' object has no
    attribute '__len__'", `nn.GRUCell` "'hx' ... Float64"; in the `if`'s body, after a
    store in the same loop body, or after a store that follows the loop it compiles).

    The store reaching the read; `ACROSS_JOIN` when a join comes between a store and the
    read; None when no store comes before the read on any way to it (a store in the other
    branch of an `if` does not: RevIN's `if mode == "norm": self.mean = ...` / `elif mode ==
    "denorm": x * self.stdev`, written/heldout14 case `ts_revin_normalization`, compiles),
    or a `with` / `try` / `match` is in the way (not measured)."""
    # expression level: up to the statement holding the read
    child: ast.AST = e
    grandchild: ast.AST | None = None
    p = ctx.parent(e)
    own_graph = False
    while p is not None and not isinstance(p, ast.stmt):
        if isinstance(p, ast.Lambda):
            return None
        if isinstance(p, COMPREHENSIONS):
            first = p.generators[0]
            if not (child is first and grandchild is first.iter):
                own_graph = True
        grandchild, child, p = child, p, ctx.parent(p)
    if p is None:
        return None
    ids = {id(s) for s in stores}
    starts = [(s.lineno, s.col_offset) for s in stores]
    joined = own_graph  # a join (or a graph of its own) lies between the read and the block
    stmt: ast.stmt = p
    while True:
        parent = ctx.parent(stmt)
        if parent is None:
            return None
        block = next(
            (seq for field in ("body", "orelse", "finalbody") if isinstance(seq := getattr(parent, field, None), list) and stmt in seq),
            None,
        )
        if block is None:
            return None
        for prev in reversed(block[: block.index(stmt)]):
            if id(prev) in ids:
                return ACROSS_JOIN if joined else prev
            t = type(prev)
            if t is ast.If or t in _LOOPS:
                if any(_block_holds([prev], at) for at in starts):
                    return ACROSS_JOIN  # stored inside, read after the join
                joined = True  # the block after it is a join: a store before it is not seen
            elif t in STATEMENT_BLOCKS:
                return None
        if parent is func:
            return None
        if isinstance(parent, ast.If):
            # a branch has one way in: a store before the `if` reaches it (a store in the
            # other branch does not: no run passes both)
            stmt = parent
            continue
        if isinstance(parent, _LOOPS) and block is parent.body:
            if any(_block_holds(block, at) for at in starts):
                return ACROSS_JOIN  # stored later in the body: the next pass reads it
            joined = True  # the header joins the way in and the next pass
            stmt = parent
            continue
        return None  # a `with`, `try` or `match` block, a nested definition: not measured


def none_guarded(e: ast.Attribute, func: ast.AST, ctx: Context) -> bool:
    """Is the read `self.<attr>` under an `if self.<attr> is not None:` (in its body) or an
    `if self.<attr> is None:` (in its `else`) of `func`? With `__init__` storing None the
    read across a join there compiles (measured, fresh v6 seeds 12000379, 12001393: `while
    ...: if self.prev is not None: x = x + ms.Tensor(self.prev) * 0` then `self.prev =
    x.asnumpy()`, read later by code that fails on a JIT Fallback value, compile at LAX):
    not modelled further, left out."""
    child: ast.AST = e
    p = ctx.parent(e)
    while p is not None and p is not func:
        if isinstance(p, ast.If):
            tests = p.test.values if isinstance(p.test, ast.BoolOp) and isinstance(p.test.op, ast.And) else [p.test]
            for t in tests:
                if (
                    isinstance(t, ast.Compare)
                    and len(t.ops) == 1
                    and isinstance(t.comparators[0], ast.Constant)
                    and t.comparators[0].value is None
                    and isinstance(t.left, ast.Attribute)
                    and t.left.attr == e.attr
                    and isinstance(t.left.value, ast.Name)
                    and t.left.value.id == "self"
                ):
                    if isinstance(t.ops[0], ast.IsNot) and child in p.body:
                        return True
                    if isinstance(t.ops[0], ast.Is) and child in p.orelse and len(tests) == 1:
                        return True
        child, p = p, ctx.parent(p)
    return False


def _plain_init_value(v: ast.expr | None, ctx: Context) -> bool:
    """What `__init__` may store on an attribute that compiled code then stores tensors on:
    `None`, a number, a tuple, a tensor or a numpy array (measured: each of these fails the
    same way, written/heldout38b probes `fix40a_st_*_loop_dense`)."""
    if isinstance(v, ast.Constant):
        return not isinstance(v.value, (str, bytes))
    return type(v) is ast.Tuple or _tensor_call(v, ctx) or _numpy_call(v, ctx)


def joined_attr(cls: ast.ClassDef | None, attr: str, ctx: Context) -> bool:
    """Can a read of `self.<attr>` across a join be a JIT Fallback object: not a Parameter
    (a store to one is a graph `Assign`), and every `__init__` store of it (none at all
    too) one of `_plain_init_value`?"""
    if cls is None:
        return False
    a = analyzer(ctx)
    if attr in a.self_info(cls).parameters or _given_parameters(cls, attr, ctx):
        return False
    values = a.self_values(cls).get(attr, [])
    return all(_plain_init_value(v, ctx) for v in values) or given_tensors(cls, attr, ctx)


#: a line that starts with a store on `self` (`self.h = ...`, `self.n += 1`, `self.h, c = ...`):
#: the leading newline makes the search skip from line to line at C speed
_SELF_STORE_LINE = re.compile(r"\n[ \t]*self\.\w+[ \t]*(?:,[^\n=]*)?(?:[-+*/%@&|^]|//|\*\*|>>|<<)?=(?!=)")


def _may_store_on_self(func: ast.AST, ctx: Context) -> bool:
    """Does a line of `func`'s text look like a store on `self` (one search at C speed, before
    the walk of `self_stores`)?"""
    first, last = getattr(func, "lineno", None), getattr(func, "end_lineno", None)
    if first is None or last is None:
        return True
    text = "\n".join(ctx.lines[first - 1 : last])
    # (`out, self.h = ...` has its store after a comma: the walk decides)
    return _SELF_STORE_LINE.search(text) is not None or ", self." in text


def stores_across_join(ctx: Context, lax: list[GraphScope]) -> bool:
    """Does compiled LAX code read an attribute of `self` it stores across a join
    (`reaching_store`)? Once per file; only functions that store on `self` are walked."""
    hit: bool | None = ctx.cache.get("opaque.across_join")
    if hit is None:
        hit = False
        a = analyzer(ctx)
        for s in lax:
            f = s.function
            if hit:
                break
            if not _may_store_on_self(f, ctx):
                continue  # most compiled functions store nothing on `self`: no walk
            own = self_stores(f)
            if not own:
                continue
            owner = a.owner_class(s.function)
            for n in ast.walk(s.function):
                if (
                    type(n) is ast.Attribute
                    and type(n.ctx) is ast.Load
                    and type(n.value) is ast.Name
                    and n.value.id == "self"
                    and n.attr in own
                    and reaching_store(n, s.function, own[n.attr], ctx) is ACROSS_JOIN
                    and joined_attr(owner, n.attr, ctx)
                ):
                    hit = True
                    break
        ctx.cache["opaque.across_join"] = hit
    return hit
