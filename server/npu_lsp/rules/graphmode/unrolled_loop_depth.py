"""MS137: constant loops that MindSpore unrolls past its call-depth limit."""

from __future__ import annotations

import ast
import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, GraphRule
from npu_lsp.rules.graphmode.values import in_dead_branch

#: MindSpore 2.10's default `max_call_depth`
_DEFAULT_LIMIT = 1000
#: call levels each unrolled turn, and each unrolled loop, costs (fitted to the `lp_*`
#: probes: one loop of 495 turns compiles, 500 fail; 250 + 249 turns in two loops fail,
#: 200 + 200 compile; 2 x 248 nested fail, 2 x 240 and 21 x 21 compile)
_PER_TURN = 2
_PER_LOOP = 2


@dataclass
class _Cost:
    """What a block of statements unrolls, along its longest path."""

    turns: int = 0
    loops: int = 0
    #: the loop MindSpore names when the limit is hit (the first one unrolled)
    first: ast.stmt | None = None

    @property
    def depth(self) -> int:
        return _PER_TURN * self.turns + _PER_LOOP * self.loops

    def then(self, other: _Cost) -> _Cost:
        # a new object only when both sides unroll something (most statements unroll
        # nothing: `_NOTHING`; a `_Cost` is never changed once made)
        if other is _NOTHING:
            return self
        if self is _NOTHING:
            return other
        return _Cost(self.turns + other.turns, self.loops + other.loops, self.first or other.first)


#: the cost of a block that unrolls nothing (shared: `_Cost.then`)
_NOTHING = _Cost()


@rule(code="MS137", name="unrolled-loop-call-depth", severity="error", family="graphmode")
class UnrolledLoopCallDepth(GraphRule):
    """## What it does
    Flags a compiled function whose loops over compile-time constants run, all together,
    more turns than MindSpore's call-depth limit allows: a `for` over `range(...)` with
    constant bounds (also from `self` attributes and arguments' defaults) or over a tuple or
    list of known length, a `while` stepping a Python int counter to a constant bound, and
    such loops nested in one another or one after the other; a comprehension over such a
    range counts as a loop.

    ## Why is this bad?
    MindSpore compiles a loop whose condition it can evaluate while compiling by unrolling
    it: each turn is a call of the loop's graph from the turn before, about two call levels
    per turn, and the code after the loop is called from the last turn, so the turns of
    loops one after another and of nested loops add up. Past `max_call_depth` (1000 unless
    `ms.set_context(max_call_depth=...)` says otherwise) MindSpore 2.10 stops with
    `RuntimeError: Exceed function call depth limit 1000`, at every syntax level. One loop
    of 495 turns compiles and one of 500 does not; two loops of 250 and 249 turns do not.
    A loop on a tensor counter is a real loop and is not unrolled; a helper's loops count
    for the helper alone (its calls return); a loop left by a Python `break` or `return`
    stops unrolling there.

    ## Example
    ```python
    class Decay(nn.Cell):
        def construct(self, x):
            for _ in range(1000):
                x = x * 0.999
            return x
    ```

    ## Use instead
    Count with a tensor, so the loop stays a loop:
    ```python
    class Decay(nn.Cell):
        def construct(self, x):
            i = ms.Tensor(0, ms.int32)
            while i < 1000:
                x = x * 0.999
                i += 1
            return x
    ```
    or raise the limit (`ms.set_context(max_call_depth=3000)`; compiling still takes
    time in proportion to the turns).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); section 3 accepts recursion of
      constant depth, which holds only below the call-depth limit.
    - Measured on MindSpore 2.10 with the written famc probes `lp_*`: `for` over `range`,
      a tuple or a list attribute, `while i < n`, loops in a helper or an `@ms.jit`
      function, with a tensor-dependent `if` or `break` in the body, nested and sequential
      loops, and `max_call_depth` set to 800, 1100, 2000 and 3000.
    """

    nodes = (ast.FunctionDef,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most compiled functions stop at the first tests
        assert type(node) is ast.FunctionDef
        if ctx.scope is None or ctx.scope.function is not node:
            return ()
        all_lines = _looping_lines(ctx)  # once per file
        lo = bisect.bisect_left(all_lines, node.lineno)
        hi = bisect.bisect_right(all_lines, node.end_lineno or node.lineno)
        looping = all_lines[lo:hi]
        if not looping:
            return ()  # no loop and no comprehension: nothing is unrolled (most functions)
        limit = call_depth_limit(ctx)
        if limit is None:
            return ()
        # an upper bound first (both sides of every `if`), then, only past the limit, the
        # branches MindSpore folds away taken out: most functions stop at the bound
        cost = UnrolledTurns(node, ctx, looping, fold=False).block(node.body)
        if cost.depth <= limit or cost.first is None:
            return ()
        cost = UnrolledTurns(node, ctx, looping, fold=True).block(node.body)
        if cost.depth <= limit or cost.first is None:
            return ()
        return [
            ctx.diagnostic(
                self,
                ctx.head_span(cost.first),
                f"MindSpore unrolls the constant loops of `{node.name}` while compiling ({cost.turns} turns in "
                f"{cost.loops} loop{'s' if cost.loops > 1 else ''}, about {cost.depth} call levels), past its call-depth "
                f"limit {limit} (Exceed function call depth limit); count with a tensor (`i = ms.Tensor(0); while i < n:`) "
                "or raise `max_call_depth`",
            )
        ]


def _looping_lines(ctx: Context) -> list[int]:
    """The numbers of the file's lines spelling `for ` or `while ` (once per file)."""
    hit: list[int] | None = ctx.cache.get("MS137.lines")
    if hit is None:
        text = ctx.text
        if "\r" in text:  # other line breaks: as `ast` numbers the lines
            hit = [i for i, line in enumerate(ctx.lines, 1) if "for " in line or "while " in line]
        else:  # one step per match, not per line: most lines have no loop
            # (`str.find` per word: a regex alternation without a literal prefix tries every
            # position of the text, measured dearer than the per-line scan)
            found: list[int] = []
            for word in ("for ", "while "):
                if not ctx.mentions(word):
                    continue  # (from the word index: an absent word costs no scan of the text)
                i = text.find(word)
                while i >= 0:
                    found.append(i)
                    i = text.find(word, i + 1)
            found.sort()
            hit, line, prev = [], 1, 0
            count = text.count
            for pos in found:
                line += count("\n", prev, pos)
                prev = pos
                if not hit or hit[-1] != line:
                    hit.append(line)
        ctx.cache["MS137.lines"] = hit
    return hit


def call_depth_limit(ctx: Context) -> int | None:
    """`max_call_depth` as the module sets it (the last `set_context(max_call_depth=...)` at
    module level), MindSpore's default without one; None when it is not a constant."""
    if "MS137.limit" in ctx.cache:  # once per file: every compiled function with a loop asks
        return ctx.cache["MS137.limit"]
    limit = ctx.cache["MS137.limit"] = _file_call_depth_limit(ctx)
    return limit


def _file_call_depth_limit(ctx: Context) -> int | None:
    """`call_depth_limit`, worked out."""
    limit = _DEFAULT_LIMIT
    if not ctx.mentions("max_call_depth"):
        return limit
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and (ctx.qualname(node.func) or "").endswith("set_context"):
            for kw in node.keywords:
                if kw.arg == "max_call_depth":
                    if not (isinstance(kw.value, ast.Constant) and type(kw.value.value) is int):
                        return None
                    limit = kw.value.value
    return limit


class UnrolledTurns:
    """The unrolled turns of one compiled function's blocks."""

    def __init__(self, func: ast.FunctionDef, ctx: Context, looping: list[int], fold: bool) -> None:
        self.func, self.ctx, self.fold = func, ctx, fold
        #: the function's lines that spell `for ` or `while ` (where loops and comprehensions
        #: are), in order
        self.looping = looping

    def _loops_in(self, st: ast.stmt) -> bool:
        i = bisect.bisect_left(self.looping, st.lineno)
        return i < len(self.looping) and self.looping[i] <= (st.end_lineno or st.lineno)

    def block(self, body: list[ast.stmt]) -> _Cost:
        total = _NOTHING
        looping = self.looping
        end = len(looping)
        bisect_left = bisect.bisect_left
        for st in body:
            # `_loops_in` inlined: a statement without a loop line (most) costs nothing
            # (`statement` gives `_NOTHING`, which `then` leaves out), and no calls
            i = bisect_left(looping, st.lineno)
            if i == end or looping[i] > (st.end_lineno or st.lineno):
                continue
            total = total.then(self.statement(st))
        return total

    def statement(self, st: ast.stmt) -> _Cost:
        if not self._loops_in(st):
            return _NOTHING  # no loop or comprehension inside (most statements)
        if isinstance(st, (*FUNCS, ast.ClassDef)):
            return _NOTHING
        if type(st) is ast.If:
            sides = [self.block(b) for b in (st.body, st.orelse) if b and not (self.fold and self._dead(b))]
            return max(sides, key=lambda c: c.depth, default=_Cost())
        if (type(st) is ast.For or type(st) is ast.While):
            turns = self.turns(st)
            inner = self.block(st.body)
            if turns is None:  # a real loop, or one we cannot count: its body once
                return inner
            first = inner.first or st
            return _Cost(turns * (1 + inner.turns), 1 + turns * inner.loops, first)
        if isinstance(st, (ast.With, ast.Try)):
            return self.block(st.body)
        return self._comprehensions(st)

    def _comprehensions(self, st: ast.stmt) -> _Cost:
        """A comprehension over a constant range is unrolled as a loop is (measured:
        `[i % 3 for i in range(600)]` fails like the loop)."""
        total = _NOTHING
        if not self._loops_in(st):
            return total  # no comprehension on its lines (most statements): no walk
        for n in ast.walk(st):
            if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and len(n.generators) == 1:
                turns = self._for_turns(n.generators[0].iter)
                if turns is not None:
                    total = total.then(_Cost(turns, 1, st))
        return total

    def _dead(self, body: list[ast.stmt]) -> bool:
        return in_dead_branch(self.ctx, self.func, self.ctx.span(body[0]))

    def turns(self, loop: ast.For | ast.While) -> int | None:
        """How many times MindSpore unrolls `loop`, when it is a constant loop with no Python
        exit (a `break` or `return` not under a tensor-dependent `if`)."""
        if loop.orelse:
            return None
        turns = self._for_turns(loop.iter) if isinstance(loop, ast.For) else self._while_turns(loop)
        if turns is None or not self._exits_only_on_tensors(loop):
            return None
        return turns

    def _for_turns(self, it: ast.expr) -> int | None:
        if type(it) is ast.Call and self.ctx.qualname(it.func) == "builtins.range" and not it.keywords:
            bounds: list[int] = []
            for a in it.args:
                n = self._int(a)
                if n is None:
                    return None
                bounds.append(n)
            if not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and bounds[2] == 0):
                return None
            return len(range(*bounds))
        if (type(it) is ast.Tuple or type(it) is ast.List) and not any(type(e) is ast.Starred for e in it.elts):
            return len(it.elts)
        return None

    def _int(self, e: ast.expr, depth: int = 0) -> int | None:
        """A constant int: a literal (`-1` too), a module-level name or a local bound once to
        one, or `self.<attr>` every instance built here holds. (Literals first: most loops of
        compiled code never ask the per-instance values, the dearest question here.)"""
        if type(e) is ast.Constant:
            return e.value if type(e.value) is int else None
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
            return -e.operand.value if type(e.operand.value) is int else None
        if isinstance(e, ast.Name) and depth < 3:
            bound = analyzer(self.ctx).single_assignment(e.id, self.func)
            if bound is not None:
                return self._int(bound, depth + 1)
            binds = self.ctx.module_bindings().get(e.id, ())
            if len(binds) == 1 and type(binds[0]) is ast.Assign and len(binds[0].targets) == 1:
                return self._int(binds[0].value, depth + 1)
            return None
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
            v = values(self.ctx).of(e, self.func)
            if isinstance(v, av.Scalar) and v.constant and type(v.value) is int:
                return v.value
        return None

    def _while_turns(self, loop: ast.While) -> int | None:
        """`while i < n:` (`<=`, `>`, `>=`) with `i` a Python int set just before the loop
        and stepped once per turn by a constant (`i += 1`) directly in its body."""
        test = loop.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return None
        name, op = test.left.id, test.ops[0]
        start = self._start(loop, name)
        step = self._step(loop, name)
        if start is None or step is None:
            return None
        n = self._int(test.comparators[0])
        if n is None:
            return None
        if isinstance(op, (ast.Lt, ast.LtE)) and step > 0:
            span = n - start + (1 if isinstance(op, ast.LtE) else 0)
            return max(0, math.ceil(span / step))
        if isinstance(op, (ast.Gt, ast.GtE)) and step < 0:
            span = start - n + (1 if isinstance(op, ast.GtE) else 0)
            return max(0, math.ceil(span / -step))
        return None

    def _start(self, loop: ast.While, name: str) -> int | None:
        _parent, block, index = block_of(loop, self.ctx)
        for st in reversed(block[:index] if index >= 0 else []):
            if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(st)):
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    return self._int(st.value)  # `i = 0`, `i = -1`, `i = START`
                return None
        return None

    def _step(self, loop: ast.While, name: str) -> int | None:
        steps: list[int] = []
        for st in loop.body:
            if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == name:
                c = st.value
                if isinstance(st.op, (ast.Add, ast.Sub)) and isinstance(c, ast.Constant) and type(c.value) is int:
                    steps.append(c.value if isinstance(st.op, ast.Add) else -c.value)
                    continue
                return None
        stores = [
            n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
        ]
        if len(steps) != 1 or len(stores) != 1 or steps[0] == 0:
            return None
        return steps[0]

    def _exits_only_on_tensors(self, loop: ast.For | ast.While) -> bool:
        """Is every `break` / `return` of `loop` under an `if` on a tensor (both sides of such
        an `if` are compiled, so the unrolling goes on)?"""
        a = analyzer(self.ctx)
        todo: list[ast.AST] = list(loop.body)
        while todo:
            n = todo.pop()
            if (type(n) is ast.Break or type(n) is ast.Return):
                p = self.ctx.parent(n)
                while p is not None and p is not loop and not (isinstance(p, ast.If) and a.kind(p.test, self.func).dynamic):
                    p = self.ctx.parent(p)
                if p is None or p is loop:
                    return False
            elif (type(n) is ast.For or type(n) is ast.While):
                todo.extend(r for r in ast.walk(n) if isinstance(r, ast.Return))
            elif not isinstance(n, (*FUNCS, ast.Lambda, ast.ClassDef)):
                todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
        return True
