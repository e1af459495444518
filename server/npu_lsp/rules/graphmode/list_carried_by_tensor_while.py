"""MS224: a list whose length a tensor-conditioned `while` changes, then zipped or iterated."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Analyzer, Kind, analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, GraphRule, own_nodes

#: list methods that change a list's length in place
_GROW = frozenset({"append", "extend", "insert"})
#: the displays a dynamic-length sequence cannot hold as items (measured: probes `fix37f_tw_*`)
_CONTAINERS: dict[type, str] = {ast.Dict: "dict", ast.Tuple: "tuple", ast.List: "list"}
#: how the loop changes a carried list: grown in place, or rebound to a list of another length
_GROWN, _REBOUND = "grown", "rebound"


@rule(code="MS224", name="list-carried-by-tensor-while", severity="error", family="graphmode")
class ListCarriedByTensorWhile(GraphRule):
    """## What it does
    Flags, around a `while` loop in compiled code whose condition is a tensor (or reads a
    list the loop refills with tensors, as in `while not all(done):` with `done` rebuilt from
    `tok == eos` comparisons), a list bound before the loop whose length the body changes
    (grown by `append` / `extend` / `insert`, or rebound to a comprehension or to a list the
    body grows, also sliced: `beams = new_beams[:k]`) when it is given to `zip(...)` or
    `enumerate(...)` in the loop or after it; and, under LAX, a `for` over such a rebound
    list or `range(len(...))` of it in the loop, or a constant index of it after the loop;
    at both levels a `for` in the loop over one rebound to a list the body starts empty and
    grows, and an `append` of a dict, tuple or list display to such a list in the loop
    (`dets.append({"box": b})`, `pairs.append((i, j))`).

    ## Why is this bad?
    MindSpore 2.10 compiles a `while` on a tensor condition once, as a real loop, not
    unrolled: a list that leaves an iteration with another length than it entered with is
    joined into a sequence of dynamic length. `zip` (and `enumerate`, built on it) refuses
    one at every syntax level (`RuntimeError: For 'zip', the dynamic length input is
    unsupported in graph mode`); a `for` over one built from an empty list fails at every
    level (`Getitem can not get element from an empty dynamic length sequence`), and under
    LAX a `for`, `len` or an index of one rebound to a comprehension fails too (`The
    pointer[seq_abs] is null`). A list rebound to a display of the same length (`a =
    [a[0] + 1]`), a list the loop does not change, and a `while` on a Python condition
    (unrolled while compiling) compile; so do `len`, `for` and an index after the loop of a
    list the body only grows in place. A sequence of dynamic length holds only scalars
    and tensors: appending a dict fails at both levels ("DynamicSequence does not support
    dictionary type as element type now"), and so does a tuple or a list ("The prim
    'ListAppend', the input_data must be list and target must be scalar or tensor"),
    whether the list is read afterwards or not and even when it held an item before the
    loop; appending a tensor compiles.

    ## Example
    ```python
    def construct(self, x):
        beams, done = [x], [False]
        while not all(done):
            new_beams, new_done = [], []
            for b, d in zip(beams, done):
                new_beams.append(b + 1)
                new_done.append(b.sum() > 100)
            beams, done = new_beams, new_done
        return beams[0]
    ```

    ## Use instead
    Keep the beams in tensors of a fixed size (`(k, steps)` with a `done` mask), loop a
    fixed number of times (`for _ in range(max_len)`, unrolled) and stop with masks, or
    decode outside the graph.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 3 (control flow on tensors). Measured on MindSpore 2.10 (written/
      heldout29b case `beam_while_done_flags_list`, probes `fix30a_bw_*`; appended
      dicts, tuples and lists: written/heldout37d probes `fix37f_tw_*`).
    """

    nodes = (ast.While,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.While)
        func = ctx.function
        if func is None or ctx.scope is None:
            return ()
        carried = _carried_lists(node, func)
        if not carried:
            return ()  # most loops change no list bound before them: no flow question asked
        a = analyzer(ctx)
        if not _run_time_loop(node, func, a):
            return ()
        return [*self._containers_appended(node, carried, ctx), *self._uses(node, carried, func, ctx)]

    def _containers_appended(self, loop: ast.While, carried: dict[str, tuple[str, bool]], ctx: Context) -> Iterable[Diagnostic]:
        """`lst.append(<a dict, tuple or list display>)` in the loop, `lst` bound before it.
        Measured at both levels (written/heldout37d probes `fix37f_tw_*`,
        `fix37f_ds_*_tensor_while`): the list becomes a dynamic-length sequence, whose items
        may only be scalars or tensors ("DynamicSequence does not support dictionary type as
        element type now", "The prim 'ListAppend' ... target must be scalar or tensor"),
        whether or not it is read afterwards and even when it held an item before the loop;
        appending a tensor compiles (`fix37f_tw_tensor_len_clean`)."""
        for st in loop.body:
            for n in _walk_own(st):
                if not (
                    type(n) is ast.Call
                    and type(f := n.func) is ast.Attribute
                    and f.attr == "append"
                    and type(f.value) is ast.Name
                    and f.value.id in carried
                    and len(n.args) == 1
                ):
                    continue
                item = n.args[0]
                what = _CONTAINERS.get(type(item))
                if what is None:
                    continue
                message = (
                    "DynamicSequence does not support dictionary type as element type now"
                    if what == "dict"
                    else "The prim 'ListAppend' ... target must be scalar or tensor"
                )
                yield ctx.diagnostic(
                    self,
                    n,
                    f"`{f.value.id}` is grown in the `while` on line {loop.lineno}, whose condition is a tensor: MindSpore compiles that loop once and makes `{f.value.id}` a sequence of dynamic length, whose items can only be scalars or tensors, so appending a {what} fails (\"{message}\"); append the tensors to separate lists, or keep fixed-size tensors",
                )

    def _uses(self, loop: ast.While, carried: dict[str, tuple[str, bool]], func: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        lax = not ctx.scope.strict  # type: ignore[union-attr]
        inside = {id(n) for st in loop.body for n in _walk_own(st)}
        end = loop.end_lineno or loop.lineno
        read_after: set[str] = set()  # one diagnostic per list read after the loop
        for n in own_nodes(func):
            # a list bound again after the loop is read fine from there on
            if type(n) is ast.Name and isinstance(n.ctx, ast.Store) and n.id in carried and n.lineno > end:
                read_after.add(n.id)
        for n in own_nodes(func):
            if type(n) is ast.Call and type(n.func) is ast.Name and n.func.id in ("zip", "enumerate"):
                if id(n) not in inside and getattr(n, "lineno", 0) <= end:
                    continue
                for arg in n.args:
                    if type(arg) is ast.Name and arg.id in carried:
                        yield ctx.diagnostic(
                            self,
                            n,
                            f"`{arg.id}` is {_how(carried[arg.id])} in the `while` on line {loop.lineno}, whose condition is a tensor: MindSpore compiles that loop once and makes `{arg.id}` a sequence of dynamic length, which `{n.func.id}` does not take (\"For 'zip', the dynamic length input is unsupported in graph mode\")",
                        )
                        break
            elif type(n) is ast.For and id(n) in inside and type(n.iter) is ast.Name and n.iter.id in carried:
                how, from_empty = carried[n.iter.id]
                if how == _REBOUND and (lax or from_empty):
                    yield ctx.diagnostic(
                        self,
                        n.iter,
                        f"`{n.iter.id}` is {_how(carried[n.iter.id])} in the `while` on line {loop.lineno}, whose condition is a tensor: MindSpore compiles that loop once and makes `{n.iter.id}` a sequence of dynamic length, which this `for` cannot walk (\"Getitem can not get element from an empty dynamic length sequence\" / \"The pointer[seq_abs] is null\")",
                    )
            elif lax and (_measured_rebound(n, carried, inside) or _read_after(n, carried, end)):
                name = _read_name(n)
                if type(n) is ast.Name:
                    if name in read_after:
                        continue
                    read_after.add(name)
                yield ctx.diagnostic(
                    self,
                    n,
                    f"`{name}` is {_how(carried[name])} in the `while` on line {loop.lineno}, whose condition is a tensor: MindSpore compiles that loop once and makes `{name}` a sequence of dynamic length, which LAX cannot measure or index (\"The pointer[seq_abs] is null\")",
                )


def _how(kind: tuple[str, bool]) -> str:
    return "grown" if kind[0] == _GROWN else "rebound to a list of another length"


def _read_name(n: ast.AST) -> str:
    if type(n) is ast.Name:
        return n.id
    return n.args[0].args[0].id  # type: ignore[attr-defined]


def _measured_rebound(n: ast.AST, carried: dict[str, tuple[str, bool]], inside: set[int]) -> bool:
    """`range(len(c))` in the loop of a list the loop rebinds (measured under LAX, probe
    `fix30a_bw_rebound_range_len_in_body`; STRICT compiles it)."""
    if (
        type(n) is ast.Call
        and id(n) in inside
        and type(n.func) is ast.Name
        and n.func.id == "range"
        and len(n.args) == 1
        and type(len_call := n.args[0]) is ast.Call
        and type(len_call.func) is ast.Name
        and len_call.func.id == "len"
        and len(len_call.args) == 1
        and type(arg := len_call.args[0]) is ast.Name
    ):
        return carried.get(arg.id, ("", False))[0] == _REBOUND
    return False


def _read_after(n: ast.AST, carried: dict[str, tuple[str, bool]], end: int) -> bool:
    """A read after the loop (`a[0]`, `len(a)`, `return a`) of a list the loop rebinds:
    measured under LAX, probes `fix30a_bw_rebound_idx_after`, `fix30a_bw2_rebound_*_after`
    (STRICT compiles them; a list the loop only grows in place reads fine after it)."""
    return (
        type(n) is ast.Name
        and isinstance(n.ctx, ast.Load)
        and getattr(n, "lineno", 0) > end
        and carried.get(n.id, ("", False))[0] == _REBOUND
    )


def _walk_own(st: ast.AST) -> list[ast.AST]:
    """The nodes of a statement, not those of functions and lambdas defined in it."""
    out: list[ast.AST] = []
    stack = [st]
    while stack:
        n = stack.pop()
        out.append(n)
        if isinstance(n, (*FUNCS, ast.Lambda, ast.ClassDef)) and n is not st:
            continue
        stack.extend(ast.iter_child_nodes(n))
    return out


def _pairs(st: ast.Assign) -> list[tuple[str, ast.expr]]:
    """(name, value) of `name = value` and of `a, b = x, y` (displays of the same length)."""
    out: list[tuple[str, ast.expr]] = []
    for t in st.targets:
        if type(t) is ast.Name:
            out.append((t.id, st.value))
        elif type(t) in (ast.Tuple, ast.List) and type(st.value) in (ast.Tuple, ast.List):
            elts, vals = t.elts, st.value.elts  # type: ignore[attr-defined]
            if len(elts) == len(vals):
                out.extend((e.id, v) for e, v in zip(elts, vals, strict=True) if type(e) is ast.Name)
    return out


def _grown_in(body: list[ast.stmt]) -> dict[str, list[ast.expr]]:
    """Names the statements grow in place (`n.append(v)`, `n.extend(v)`, `n.insert(i, v)`,
    `n += [...]`), with what each growth adds."""
    out: dict[str, list[ast.expr]] = {}
    for st in body:
        for n in _walk_own(st):
            if (
                type(n) is ast.Call
                and type(f := n.func) is ast.Attribute
                and f.attr in _GROW
                and type(f.value) is ast.Name
                and n.args
            ):
                out.setdefault(f.value.id, []).append(n.args[-1])
            elif type(n) is ast.AugAssign and type(n.op) is ast.Add and type(n.target) is ast.Name:
                out.setdefault(n.target.id, []).append(n.value)
    return out


def _sized_display(v: ast.expr) -> bool:
    return type(v) in (ast.List, ast.Tuple) and not any(type(e) is ast.Starred for e in v.elts)  # type: ignore[attr-defined]


def _list_source(v: ast.expr, grown: dict[str, list[ast.expr]]) -> str | None:
    """The name of a list the loop grows that `v` is (`nb`, `nb[:k]`), or "" for a
    comprehension (`[u + 1 for u in a]`, `tuple(u + 1 for u in a)`): a value of another
    length than the list it replaces. None otherwise (a display keeps its length)."""
    if type(v) is ast.Subscript and type(v.slice) is ast.Slice:
        v = v.value
    if type(v) is ast.Name and v.id in grown:
        return v.id
    if type(v) is ast.ListComp:
        return ""
    if type(v) is ast.BinOp and type(v.op) is ast.Add and any(
        type(side) in (ast.List, ast.ListComp) and getattr(side, "elts", True) for side in (v.left, v.right)
    ):
        return ""  # `a = a + [x]`: one more item each pass
    if (
        type(v) is ast.Call
        and type(v.func) is ast.Name
        and v.func.id in ("list", "tuple")
        and len(v.args) == 1
        and type(v.args[0]) in (ast.ListComp, ast.GeneratorExp)
    ):
        return ""
    return None


def _carried_lists(loop: ast.While, func: ast.AST) -> dict[str, tuple[str, bool]]:
    """The lists bound before `loop` whose length its body changes: name -> (how, whether the
    list it is rebound to starts empty in the body)."""
    grown = _grown_in(loop.body)
    rebound: dict[str, tuple[str, bool]] = {}
    starts_empty: set[str] = set()
    for st in loop.body:
        for n in _walk_own(st):
            if type(n) is not ast.Assign:
                continue
            for name, v in _pairs(n):
                if type(v) in (ast.List, ast.Tuple) and not v.elts:  # type: ignore[attr-defined]
                    starts_empty.add(name)
                src = _list_source(v, grown)
                if src is not None:
                    rebound[name] = (_REBOUND, src != "" and src in starts_empty)
    before = _bound_before(loop, func)
    out = {name: (_GROWN, False) for name in grown if name in before}
    out.update({name: how for name, how in rebound.items() if name in before})
    return out


def _bound_before(loop: ast.While, func: ast.AST) -> set[str]:
    """Names a plain assignment binds to a list or tuple display before the loop (the
    loop's carried lists start there)."""
    out: set[str] = set()
    for n in own_nodes(func):
        if type(n) is ast.Assign and n.lineno < loop.lineno:
            out.update(name for name, v in _pairs(n) if _sized_display(v))
    return out


def _run_time_loop(loop: ast.While, func: ast.AST, a: Analyzer) -> bool:
    """Is the loop's condition a tensor, or does it read a list the body rebinds to one it
    fills with tensors (`while not all(done)` with `done = new_done[:k]` and
    `new_done.append(tok == eos)`)? MindSpore unrolls a `while` on Python values while
    compiling (probe `fix30a_bw_python_flags_zip`: flags that stay Python bools compile)."""
    if a.kind(loop.test, func).dynamic:
        return True
    read = {n.id for n in ast.walk(loop.test) if type(n) is ast.Name}
    grown = _grown_in(loop.body)
    tensors = {
        name for name, items in grown.items() if any(a.kind(v, func) == Kind.TENSOR for v in items)
    }
    for st in loop.body:
        for n in _walk_own(st):
            if type(n) is ast.Assign:
                for name, v in _pairs(n):
                    if name not in read:
                        continue
                    if type(v) is ast.Subscript and type(v.slice) is ast.Slice:
                        v = v.value
                    if (type(v) is ast.Name and v.id in tensors) or a.kind(v, func) == Kind.TENSOR:
                        return True
    return False
