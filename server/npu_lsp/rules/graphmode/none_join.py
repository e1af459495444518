"""Names and helper results that meet `None` under a tensor condition.

Under LAX, MindSpore 2.10 joins `None` with another value (a tensor, a number) on the two paths
of a branch on a tensor into a Python object (`AbstractAny`), as it does a JIT Fallback
result: arithmetic on it compiles, but MindSpore code reading its shape or dtype does not
(measured, written/lax probes `gf_pa_*`, `gf_pb_*`, `gf_pc_*`: `y = None; if x.sum() > 0: y = x;
v = x if y is None else y` then `nn.Dense(v)`, `nn.LayerNorm`, `v.dtype`, `{'a': v}['a']`,
`ops.zeros_like(v)` fail, "'int' object has no attribute '__len__'", and under `value_and_grad`
"The pointer[seq_abs] is null"; the same on `x.ndim == 2`, or `y` left unread, compiles).
"""

from __future__ import annotations

import ast
import bisect
import re

from npu_lsp.astutil import is_none_literal, none_compared
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import FUNCS, own_nodes

_KEY = "none_join.bindings"
_LINES_KEY = "none_join.lines"
_IFEXP_KEY = "none_join.ifexp-lines"
#: around a "None" of the text: a conditional expression with a None side
_NONE_IF = re.compile(r"None[ \t]+if\b")
_ELSE_BEFORE = re.compile(r"\belse[ \t]+$")
#: a line that may bind or return None (`y = None`, `return None`, a bare `return`)
_NONE_LINE = re.compile(r"^[ \t]*(?:[A-Za-z_]\w*[ \t]*=[ \t]*None|return(?:[ \t]+None)?)[ \t]*(?:#.*)?$", re.M)
#: the characters `[ \t]` matches (`_NONE_IF` after its "None"), and those `_ELSE_BEFORE`
#: can end on ("else \n": `$` matches before a line break at the end of the range)
_BLANKS = frozenset(" \t")
_BEFORE_NONE = frozenset(" \t\n")
#: where a line `_NONE_LINE` matches ends its statement: its last "None" or "return", then
#: blanks and a comment up to the line's end (each pattern led by its literal: searched at C
#: speed, and found only on the lines that may match)
_NONE_LINE_ENDS = (
    re.compile(r"None[ \t]*(?:#[^\n]*)?$", re.M),
    re.compile(r"return[ \t]*(?:#[^\n]*)?$", re.M),
)


def _none_lines(ctx: Context) -> list[int]:
    """The numbers of the file's lines that may bind or return None (once per file: most
    functions have none, and walking each of them would cost more than the rest of this)."""
    hit: list[int] | None = ctx.cache.get(_LINES_KEY)
    if hit is None:
        text, hit, line, pos = ctx.text, [], 1, 0
        # A match lies within one line (no pattern item crosses a newline) and ends, blanks
        # and a comment aside, with "None" or "return": `_NONE_LINE` is tried only at the
        # starts of the lines where one of `_NONE_LINE_ENDS` finds such an end (`^` under
        # re.M is tried at every position of the text, the dearest scan of a run; a Python
        # step per "None" or "return" of the text cost ~6 M instructions on a 5,000-line
        # file, most of them in lines like `if m is not None:`). The same lines as a
        # `finditer` over the text.
        rfind = text.rfind
        starts = {rfind("\n", 0, m.start()) + 1 for end in _NONE_LINE_ENDS for m in end.finditer(text)}
        match = _NONE_LINE.match
        for start in sorted(starts):
            if match(text, start) is not None:
                line += text.count("\n", pos, start)
                pos = start
                hit.append(line)
        ctx.cache[_LINES_KEY] = hit
    return hit


def may_hold_none(func: ast.AST, ctx: Context) -> bool:
    """Has `func` a line that may bind or return None (a bisect in a per-file line index)?"""
    lines = _none_lines(ctx)
    start, end = getattr(func, "lineno", 0), getattr(func, "end_lineno", None) or 0
    i = bisect.bisect_left(lines, start)
    return i < len(lines) and lines[i] <= end


def _is_none(e: ast.expr | None) -> bool:
    """No value (a bare `return`) or the literal `None`."""
    return e is None or is_none_literal(e)


def _bindings(func: ast.AST, ctx: Context) -> dict[str, list[ast.Assign]]:
    """Simple `name = value` statements of `func` (its own, not nested functions'), by name,
    for the names bound to None at least once and to something else at least once."""
    memo: dict[int, dict[str, list[ast.Assign]]] = ctx.cache.setdefault(_KEY, {})
    hit = memo.get(id(func))
    if hit is None:
        by_name: dict[str, list[ast.Assign]] = {}
        for st in own_nodes(func):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                by_name.setdefault(st.targets[0].id, []).append(st)
        hit = {
            n: bs
            for n, bs in by_name.items()
            if any(_is_none(b.value) for b in bs) and any(not _is_none(b.value) for b in bs)
        }
        memo[id(func)] = hit
    return hit


def _under_tensor_if(node: ast.AST, func: ast.AST, ctx: Context, outside: set[int]) -> bool:
    """Is `node` inside an `if` of `func` on a tensor (not one of `outside`)?"""
    a = analyzer(ctx)
    p = ctx.parent(node)
    while p is not None and p is not func and not isinstance(p, FUNCS):
        if isinstance(p, ast.If) and id(p) not in outside and a.kind(p.test, func).dynamic:
            return True
        p = ctx.parent(p)
    return False


def _enclosing(node: ast.AST, func: ast.AST, ctx: Context) -> set[int]:
    out: set[int] = set()
    p = ctx.parent(node)
    while p is not None and p is not func:
        out.add(id(p))
        p = ctx.parent(p)
    return out


def none_joined(name: ast.Name, func: ast.AST, ctx: Context) -> bool:
    """Does reading `name` here read None joined with another value under a tensor condition
    (bound to None and to a value before the read, one of them inside an `if` on a tensor
    that does not hold the read)?"""
    binds = _bindings(func, ctx).get(name.id)
    if not binds:
        return False
    before = [b for b in binds if (b.end_lineno or b.lineno) < name.lineno]
    if not any(_is_none(b.value) for b in before) or not any(not _is_none(b.value) for b in before):
        return False
    outside = _enclosing(name, func, ctx)
    return any(
        _under_tensor_if(b, func, ctx, outside) and not _jumps_to_none_test(b, name.id, ctx) for b in before
    )


def _jumps_to_none_test(binding: ast.stmt, name: str, ctx: Context) -> bool:
    """Is `binding` the body of `if t: name = v; continue` (or `break`) whose loop is followed
    by a None test of `name` (`none_tested_after_loop`)? The jump carries the value past the
    `if`'s join, and MindSpore compiles what follows the loop once per value it carries."""
    node = ctx.parent(binding)
    return isinstance(node, ast.If) and binding in node.body and none_tested_after_loop(node, name, ctx)


def none_tested_after_loop(node: ast.If, name: str, ctx: Context) -> bool:
    """`if t: name = value; break` (or `continue`) inside a loop, and the first statement
    reading `name` after the loop reads it only under a None test (`name is None`,
    `is not None`, `== None`, `!= None`): `v if name is None else name`, `if name is None: ...`.
    Measured on 2.10 (written/famc probes `nj_*`, reach2 `bk_*`): the loop carries the name's
    value out along each path, the test tells the None path from the other, and it compiles
    at both levels, whichever side of the conditional expression holds the name; the same
    read without the jump, or without the test, fails (LAX: the name is a Python object,
    "'int' object has no attribute '__len__'"; STRICT: None cannot join the value)."""
    if not node.body or not isinstance(node.body[-1], (ast.Break, ast.Continue)) or node.orelse:
        return False
    loop = ctx.parent(node)
    while loop is not None and isinstance(loop, ast.If):
        loop = ctx.parent(loop)
    if not isinstance(loop, (ast.For, ast.While)):
        return False
    _parent, block, index = block_of(loop, ctx)
    for st in block[index + 1 :] if index >= 0 else ():
        reads = [n for n in ast.walk(st) if isinstance(n, ast.Name) and n.id == name]
        if reads:
            return all(_under_none_test(r, name, st, ctx) for r in reads)
    return False


def _is_none_test(e: ast.AST, name: str) -> bool:
    """`name is None`, `name is not None`, `name == None`, `name != None` (either side)."""
    compared = none_compared(e, loose=True)
    return compared is not None and type(compared[0]) is ast.Name and compared[0].id == name


def _under_none_test(read: ast.Name, name: str, stop: ast.AST, ctx: Context) -> bool:
    """Is `read` a None test of `name`, or inside a conditional expression or `if` (within
    `stop`) whose test is one?"""
    child: ast.AST = read
    node = ctx.parent(read)
    while node is not None:
        if _is_none_test(node, name):
            return True
        if isinstance(node, (ast.IfExp, ast.If)) and child is not node.test and _is_none_test(node.test, name):
            return True
        if node is stop:
            return False
        child, node = node, ctx.parent(node)
    return False


def returns_none_joined(func: ast.FunctionDef, ctx: Context) -> bool:
    """Does `func` return None on one path and a value on another, one of them inside an
    `if` on a tensor (`if x.max() > 1: return None` then `return x`)?"""
    rets = [r for r in own_nodes(func) if isinstance(r, ast.Return)]
    if not any(_is_none(r.value) for r in rets) or not any(not _is_none(r.value) for r in rets):
        return False
    return any(_under_tensor_if(r, func, ctx, set()) for r in rets)


def _ifexp_none_lines(ctx: Context) -> list[int]:
    """The numbers of the lines holding `None if` or `else None` (once per file)."""
    hit: list[int] | None = ctx.cache.get(_IFEXP_KEY)
    if hit is None:
        # each "None" of the text (`str.find` runs at C speed) is tried in place
        text, hit, line, pos = ctx.text, [], 1, 0
        i = text.find("None")
        while i >= 0:
            # (each pattern needs a blank beside the "None", or for `$` a line break
            # before it: most have neither, and are passed without a regex call)
            if (text[i + 4 : i + 5] in _BLANKS and _NONE_IF.match(text, i)) or (
                i > 0 and text[i - 1] in _BEFORE_NONE and _ELSE_BEFORE.search(text, max(0, i - 12), i)
            ):
                line += text.count("\n", pos, i)
                pos = i
                if not hit or hit[-1] != line:
                    hit.append(line)
            i = text.find("None", i + 4)
        ctx.cache[_IFEXP_KEY] = hit
    return hit


def _ifexp_none_join(func: ast.AST, ctx: Context) -> bool:
    """Does `func` hold `None if <tensor test> else v` (or the other way round)?"""
    lines = _ifexp_none_lines(ctx)
    start, end = getattr(func, "lineno", 0), getattr(func, "end_lineno", None) or 0
    i = bisect.bisect_left(lines, start)
    if not (i < len(lines) and lines[i] <= end):
        return False
    a = analyzer(ctx)
    for n in own_nodes(func):
        if isinstance(n, ast.IfExp) and _is_none(n.body) != _is_none(n.orelse) and a.kind(n.test, func).dynamic:
            return True
    return False


def has_none_join(func: ast.AST, ctx: Context) -> bool:
    """Does `func` hold a name, a return or a conditional expression that may join None
    under a tensor condition?"""
    if _ifexp_none_join(func, ctx):
        return True
    if not may_hold_none(func, ctx):
        return False
    if any(
        _under_tensor_if(b, func, ctx, set()) for bs in _bindings(func, ctx).values() for b in bs
    ):
        return True
    return isinstance(func, ast.FunctionDef) and returns_none_joined(func, ctx)
