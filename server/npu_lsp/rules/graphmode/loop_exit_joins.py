"""MS119's joins across a tensor-dependent `if` that leaves an unrolled loop.

MindSpore unrolls a `for` over a range of compile-time length and compiles the code after the
loop once per way out of it (`break`, `continue`, running to the end); the values those paths
leave behind are then joined as branches are. `loop_exit_join` answers the three shapes of
that join MindSpore 2.10 refuses: a Python number kept on the path that leaves before it
becomes a tensor, list items of different types on different paths, and text built at run
time on some paths and the constant `""` on another.
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import range_count
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.dynamic_shape import dynamic_shape, run_time_test
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import returns_in
from npu_lsp.rules.graphmode.runtime_index_into_constants import (
    built_strings,
    constant_table_display,
)


def loop_exit_join(node: ast.If, ctx: Context) -> str | None:
    """MS119's message for `node` (an `if` in an unrolled loop's body) when the paths it
    opens leave values MindSpore cannot join after the loop; None otherwise."""
    exits = bool(node.body) and type(node.body[-1]) in _EXITS and not node.orelse
    skipped = _number_skipped_by_exit(node, ctx) if exits else None
    if skipped is not None:
        name, bound, later = skipped
        return (
            f"this tensor-dependent `if` leaves the loop (`{type(node.body[-1]).__name__.lower()}`) before `{name}` becomes a tensor (line {later.lineno}), so `{name}` returned after the loop is the Python number `{ctx.segment(bound)}` on one path and a Tensor on the other; MindSpore cannot join them (Cannot join the return values of different branches); start it as a tensor (`ops.zeros((), ms.float32)`)"
        )
    split = _list_items_split_by_exit(node, ctx) if type(ctx.parent(node)) is ast.For else None
    if split is not None:
        name, left, right, error = split
        return (
            f"the paths of this tensor-dependent `if` in an unrolled loop leave `{name}` holding `{ctx.segment(left)}` where another path holds `{ctx.segment(right)}` ({error.reason}); MindSpore joins the lists of the two paths item by item and cannot join these (Cannot join the return values of different branches: Type Join Failed: {error.mindspore}); append values of one type (an int sentinel such as `-1` for a marker), or keep the marker out of the list"
        )
    text = _joined_text_split_by_exit(node, ctx) if exits else None
    if text is not None:
        name, joined = text
        return (
            f"on the path where this tensor-dependent `if` leaves the loop before anything is appended, `{ctx.segment(joined)}` (line {joined.lineno}) is the constant str of `{name}`'s first items; on the others LAX builds it at run time from strs picked by a run-time index (a Python object), and it reaches the output inside a tuple, dict or list whose items MindSpore joins one by one (Cannot join the return values of different branches: Type Join Failed: dtype1 = String, dtype2 = Any); return the indices and build the text in Python, or return the text on its own"
        )
    return None


_EXITS = (ast.Break, ast.Continue)


def _number_skipped_by_exit(node: ast.If, ctx: Context) -> tuple[str, ast.expr, ast.stmt] | None:
    """`total = 0.0` before a `for`, `if <tensor>: ...; break` (or `continue`) in its body,
    then `total += t` (a tensor) after that `if`, and `return total` right after the loop:
    the path that leaves on the first turn keeps the Python number, and MindSpore 2.10 cannot
    join it with the Tensor of the other paths at both levels ("Cannot join the return values
    of different branches"; written/heldout18b case `rl_ppo_kl_early_stop_item` with a
    `.item()` test, written/reach2 probe `ct_float_total_continue_return`, heldout18b probes
    `fe18b_ex_*`). A name that becomes a tensor before the `if`, or that is combined with a
    tensor before it is returned (`return total / count` with a tensor `count`), compiles."""
    body = node.body
    if node.orelse or not body or type(body[-1]) not in (ast.Break, ast.Continue):
        return None
    loop = ctx.parent(node)
    if type(loop) is not ast.For or node not in loop.body or loop.orelse:
        return None
    block = ctx.parent(loop)
    stmts = getattr(block, "body", None)
    if not isinstance(stmts, list) or loop not in stmts:
        return None
    at = stmts.index(loop)
    after = stmts[at + 1] if at + 1 < len(stmts) else None
    if type(after) is not ast.Return:
        return None
    out = after.value
    # `return total, x`: an item of the returned tuple meets the same way (probe
    # `fe18b_ex_break_return_tuple`)
    outs = out.elts if type(out) is ast.Tuple else [out]
    for e in outs:
        if type(e) is ast.Name:
            found = _number_skipped_for(node, loop, stmts[:at], e.id, ctx)
            if found is not None:
                return found
    return None


def _number_skipped_for(
    node: ast.If, loop: ast.For, before: list[ast.stmt], name: str, ctx: Context
) -> tuple[str, ast.expr, ast.stmt] | None:
    body = node.body
    start: ast.expr | None = None
    for st in before:
        if type(st) is ast.Assign and any(type(t) is ast.Name and t.id == name for t in st.targets):
            start = st.value if len(st.targets) == 1 else None
        elif any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for n in ast.walk(st)):
            start = None
    if not (
        isinstance(start, ast.Constant) and type(start.value) in (int, float)
    ):
        return None
    i = loop.body.index(node)

    def stores(sts: list[ast.stmt]) -> list[ast.Name]:
        return [
            n for st in sts for n in ast.walk(st) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store
        ]

    if stores(loop.body[:i]) or stores(body):
        return None
    a = analyzer(ctx)
    later: ast.stmt | None = None
    for st in loop.body[i + 1 :]:
        target = st.target if type(st) is ast.AugAssign else st.targets[0] if type(st) is ast.Assign and len(st.targets) == 1 else None
        if type(target) is ast.Name and target.id == name:
            value = st.value  # type: ignore[attr-defined]
        else:
            if stores([st]):
                return None  # bound in a nested block or by unpacking: not followed
            continue
        if later is None:
            if a.kind(value) != Kind.TENSOR:
                return None
            later = st
    if later is None or not a.kind(node.test).dynamic:
        return None
    return name, start, later


def _unrolled_for(loop: ast.For, ctx: Context) -> bool:
    """Is `loop` a `for` MindSpore unrolls: over a `range` of compile-time bounds (literals,
    attributes, static sizes) or a sequence of known length, not over a tensor whose shape is
    known only at run time (compiled as a loop)?"""
    it = loop.iter
    if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "range":
        a = analyzer(ctx)
        return all(not a.kind(x).dynamic for x in it.args)
    return not dynamic_shape(it, ctx)


def _appends_to(st: ast.stmt) -> tuple[str, ast.expr] | None:
    """`name.append(value)` as a statement: (name, value)."""
    if type(st) is not ast.Expr:
        return None
    call = st.value
    if not (
        type(call) is ast.Call
        and type(call.func) is ast.Attribute
        and call.func.attr == "append"
        and type(call.func.value) is ast.Name
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    return call.func.value.id, call.args[0]


def _returned_after(loop: ast.For, name: str, ctx: Context) -> bool:
    """Is the list `name` handed out by the `return` right after `loop` (in the same block):
    alone, as an item of a returned tuple or list display (`return decoded, h`,
    `return [decoded]`) or an item of it picked by a constant (`return decoded[-1]`)?"""
    block = ctx.parent(loop)
    stmts = getattr(block, "body", None)
    if not isinstance(stmts, list) or loop not in stmts:
        return False
    at = stmts.index(loop)
    after = stmts[at + 1] if at + 1 < len(stmts) else None
    if type(after) is not ast.Return or after.value is None:
        return False
    out = after.value
    outs = out.elts if type(out) in (ast.Tuple, ast.List) else [out]  # type: ignore[attr-defined]
    for e in outs:
        if type(e) is ast.Subscript and isinstance(e.slice, (ast.Constant, ast.UnaryOp)):
            e = e.value
        if type(e) is ast.Name and e.id == name:
            return True
    return False


def _list_prefix(loop: ast.For, name: str, ctx: Context) -> list[ast.expr] | None:
    """The items of the list display `name` is bound to last before `loop` in its block
    (`decoded = []`, `tags = ["<s>"]`); None when it is bound otherwise or not seen."""
    block = ctx.parent(loop)
    stmts = getattr(block, "body", None)
    if not isinstance(stmts, list) or loop not in stmts:
        return None
    for st in reversed(stmts[: stmts.index(loop)]):
        if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name and st.targets[0].id == name:
            return list(st.value.elts) if type(st.value) is ast.List else None
        if any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for n in ast.walk(st)):
            return None
    return None


def _list_items_split_by_exit(node: ast.If, ctx: Context) -> tuple[str, ast.expr, ast.expr, av.JoinError] | None:
    """A list grown in an unrolled `for` (over `range(N)`, N >= 2 or unknown) around a
    run-time `if` whose paths leave it holding items that do not join. Measured
    (written/heldout38b case `greedy_decode_eos_item_break_single`, probes `fix38b_ej_*`,
    `fix39b_ej_*`), both levels:
    - `if t: lst.append(a); break` (or `if t: break` alone) with `lst.append(b)` elsewhere in
      the body, and `lst` returned right after the loop (alone, in a tuple or list display,
      `lst[-1]`): MindSpore compiles the code after the loop once per way out of it, so the
      returned lists, of different lengths, are joined into one of unknown length whose items
      must all join: the items of the display it started as, `a` and `b` (a str against an
      `.item()` int, `int(t)` or a tensor, a Python float against an Int64 `.item()`, fail:
      "Type Join Failed: dtype1 = String, dtype2 = Int64"; `-1` against an Int64 `.item()`,
      two strs, compile, as does the list measured with `len`, stacked or not returned);
    - `if t: lst.append(a) else: lst.append(b)`: each turn joins the two lists item by item
      before the next turn appends again, also when the list is never read after the loop;
      `if t: lst.append(a); continue` with `b` appended after it fails so when `lst` is
      returned after the loop (measured with `len` only, `"<EOS>"` against `7` or an `.item()`
      compiles: probes `fix39a_brk_cont_const_tail_*`).
    With one turn (`range(1)`), or without a loop, lists of one length join at LAX (STRICT
    refuses; not reported here). Returns (list, a, b, error)."""
    body = node.body
    last = type(body[-1])
    loop = ctx.parent(node)
    if type(loop) is not ast.For or node not in loop.body or loop.orelse:
        return None
    turns = range_count(loop.iter)
    if turns is not None and turns < 2:
        return None
    i = loop.body.index(node)
    own = [x for st in body if (x := _appends_to(st)) is not None]
    if node.orelse:
        other = [x for st in node.orelse if (x := _appends_to(st)) is not None]
        if last in _EXITS or len(own) != 1 or len(other) != 1 or own[0][0] != other[0][0]:
            return None
        name, pairs = own[0][0], [(own[0][1], other[0][1])]
    elif last is ast.Continue:
        if len(own) != 1:
            return None
        name = own[0][0]
        rest = [x[1] for st in loop.body[i + 1 :] if (x := _appends_to(st)) is not None and x[0] == name]
        if len(rest) != 1 or not _returned_after(loop, name, ctx):
            return None
        pairs = [(own[0][1], rest[0])]
    elif last is ast.Break:
        if len(own) > 1:
            return None
        names = {own[0][0]} if own else {x[0] for st in loop.body if (x := _appends_to(st)) is not None}
        if len(names) != 1:
            return None
        name = next(iter(names))
        grown = [x[1] for st in loop.body if (x := _appends_to(st)) is not None and x[0] == name]
        prefix = _list_prefix(loop, name, ctx)
        if not grown or prefix is None or not _returned_after(loop, name, ctx):
            return None
        items = prefix + [x[1] for x in own] + grown
        pairs = [(a, b) for k, a in enumerate(items) for b in items[k + 1 :]]
    else:
        return None
    if any(
        type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Store for st in loop.body for n in ast.walk(st)
    ):
        return None  # rebound in the loop: not followed
    if not _unrolled_for(loop, ctx) or not run_time_test(node.test, analyzer(ctx), ctx):
        return None
    vals = values(ctx)
    strict = bool(ctx.scope and ctx.scope.strict)
    for left, right in pairs:
        lv = vals.of(left)
        rv = vals.of(right) if lv.known and not isinstance(lv, av.NoneValue) else av.UNKNOWN
        if not rv.known or isinstance(rv, av.NoneValue):
            continue
        error = av.join(lv, rv, av.Site.RETURN).error
        if error is not None and error.applies(strict):
            return name, left, right, error
    return None


def _picked_string(e: ast.expr, ctx: Context) -> bool:
    """A str picked from a table of strings by a run-time index (`self.character[c]` with `c`
    a tensor or `int(t)`): LAX reads it at run time, a Python object (Any) in the graph."""
    if type(e) is not ast.Subscript or isinstance(e.slice, (ast.Constant, ast.Slice)):
        return False
    if not analyzer(ctx).kind(e.slice).dynamic:
        return False
    table = constant_table_display(e.value, ctx)
    if table is not None:
        return bool(table.elts) and all(type(x) is ast.Constant and type(x.value) is str for x in table.elts)
    return built_strings(e.value, ctx) is not None


def _text_output(call: ast.Call, after: int, ctx: Context, depth: int = 0) -> bool:
    """Does the str `call` makes reach the graph's output inside a structure whose items are
    joined one by one: a returned tuple or dict display, or a list it is appended to that is
    returned (alone or in a tuple)? Returned alone, in a list display (LAX makes that list a
    Python object) or read back by a constant index, it joins at the top, where LAX lets a
    Python object join with anything (measured, written/heldout38c probes `fix38c_brk*`,
    `fix39b_sj_*`)."""
    func = ctx.function
    p = ctx.parent(call)
    if p is None:
        return False
    if type(p) in (ast.Tuple, ast.Dict) and type(ctx.parent(p)) is ast.Return:
        return True
    if (
        type(p) is ast.Call
        and type(p.func) is ast.Attribute
        and p.func.attr == "append"
        and type(p.func.value) is ast.Name
        and type(ctx.parent(p)) is ast.Expr
        and func is not None
    ):
        grown = p.func.value.id
        for r in returns_in(getattr(func, "body", [])):
            if r.lineno <= after or r.value is None:
                continue
            outs = r.value.elts if type(r.value) is ast.Tuple else [r.value]
            if any(type(e) is ast.Name and e.id == grown for e in outs):
                return True
        return False
    if type(p) is ast.Assign and len(p.targets) == 1 and type(p.targets[0]) is ast.Name and depth == 0 and func is not None:
        name = p.targets[0].id
        reads = [n for n in ast.walk(func) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno > after]
        return any(_text_output(n, after, ctx, 1) for n in reads)  # type: ignore[arg-type]
    return False


def _joined_text_split_by_exit(node: ast.If, ctx: Context) -> tuple[str, ast.Call] | None:
    """Under LAX: `word = []` before an unrolled `for`, `if <run-time test>: break` (or
    `continue`) in its body, then `word.append(TABLE[c])` of a str picked by a run-time
    index, and `"".join(word)` after the loop reaching the output inside a tuple, a dict or
    a returned list grown by `append`: on the path that leaves before any append the text is
    the constant `""` (a String), on the others LAX builds it at run time (a Python object),
    and items of a tuple or list join one by one: "Type Join Failed: dtype1 = String, dtype2
    = Any" (written/heldout38c cases `converter_idx_to_char_list_indexing_from_tensor`,
    `r2_idx_to_char_int_cast_break`, probes `fix38c_brk*`, `fix39b_sj_*`; the text returned
    alone, in a list display, `words[0]`, `len(words)`, a first item picked before the loop
    or constant strs appended compile). Returns (list, join call)."""
    if ctx.scope and ctx.scope.strict:
        return None  # STRICT refuses the run-time pick or `join` itself (MS150 and others)
    body = node.body
    if node.orelse or type(body[-1]) not in _EXITS:
        return None
    loop = ctx.parent(node)
    if type(loop) is not ast.For or node not in loop.body or loop.orelse:
        return None
    i = loop.body.index(node)
    grown = [x for st in loop.body[i + 1 :] if (x := _appends_to(st)) is not None]
    if len(grown) != 1 or not _picked_string(grown[0][1], ctx):
        return None
    name = grown[0][0]
    if any(_appends_to(st) is not None for st in body) or any(
        (x := _appends_to(st)) is not None and x[0] == name for st in loop.body[:i]
    ):
        return None
    prefix = _list_prefix(loop, name, ctx)
    if prefix is None or not all(type(x) is ast.Constant and type(x.value) is str for x in prefix):
        return None
    if not _unrolled_for(loop, ctx) or not run_time_test(node.test, analyzer(ctx), ctx):
        return None
    end = loop.end_lineno or loop.lineno
    func = ctx.function
    if func is None:
        return None
    for n in ast.walk(func):
        if (
            type(n) is ast.Call
            and n.lineno > end
            and type(n.func) is ast.Attribute
            and n.func.attr == "join"
            and type(n.func.value) is ast.Constant
            and type(n.func.value.value) is str
            and len(n.args) == 1
            and type(n.args[0]) is ast.Name
            and n.args[0].id == name
            and _text_output(n, end, ctx)
        ):
            return name, n
    return None
