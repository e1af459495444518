"""The compiled LAX functions of a file, and what each holds, found once: its calls and
f-strings (kept on its node), and text tests on its lines that let MS145 skip a function
before collecting anything from it."""

from __future__ import annotations

import ast
import bisect

from npu_lsp.astutil import find_branches
from npu_lsp.engine import Context
from npu_lsp.scope import GraphScope


def lax_scopes(ctx: Context) -> list[GraphScope]:
    """The compiled LAX functions of this file (not those of modules it imports)."""
    hit: list[GraphScope] | None = ctx.cache.get("opaque.lax_scopes")
    if hit is None:
        prefix = ctx.scopes.info.module + "."
        hit = ctx.cache["opaque.lax_scopes"] = [
            s for s in ctx.scopes.scopes.values() if s.level == "lax" and s.qualname.startswith(prefix)
        ]
    return hit


#: attribute of a function's node holding its calls (`calls_in`)
_CALLS_MEMO = "_ascend_lens_calls"


def calls_in(func: ast.AST) -> list[ast.AST]:
    """The calls in `func` (`find_branches`), kept on its node: they depend on its subtree
    only, and the language server's incremental analysis keeps the trees of the
    definitions an edit left alone (every edit asks again for every compiled function)."""
    kept = getattr(func, "__dict__", None)
    found = kept.get(_CALLS_MEMO) if kept is not None else None
    if found is None:
        both = find_branches(func, _CALL_OR_FSTRING)
        call_t = ast.Call
        found = [n for n in both if type(n) is call_t]
        fstrings = [n for n in both if type(n) is not call_t] if len(found) < len(both) else []
        if kept is not None:
            kept[_CALLS_MEMO] = found
            kept[_FSTRINGS_MEMO] = fstrings
        else:
            _last_fstrings[:] = fstrings
    return found


_FSTRINGS_MEMO = "_ascend_lens_fstrings"
_CALL_OR_FSTRING = frozenset({ast.Call, ast.JoinedStr})
_last_fstrings: list[ast.AST] = []


def fstrings_in(func: ast.AST) -> list[ast.AST]:
    """The f-strings in `func`, found by the walk of `calls_in`."""
    kept = getattr(func, "__dict__", None)
    found = kept.get(_FSTRINGS_MEMO) if kept is not None else None
    if found is None:
        calls_in(func)
        found = kept.get(_FSTRINGS_MEMO) if kept is not None else None
        if found is None:
            found = list(_last_fstrings)
    return found


#: the characters of a word of an ASCII text (`ascii_words`); "" (past the end) is not one
_WORD_CHARS = frozenset(chr(c) for c in range(128) if chr(c).isalnum() or chr(c) == "_")


def function_mentions(func: ast.AST, words: frozenset[str] | None, ctx: Context) -> bool:
    """Does the text of `func` (its decorators included) hold one of `words`? Without one,
    none of its calls may fall back, and its calls need not be collected."""
    if words is None:
        return True
    if not words:
        return False  # (its text is part of the file's, which holds none of them)
    first = min((d.lineno for d in getattr(func, "decorator_list", ())), default=getattr(func, "lineno", None))
    last = getattr(func, "end_lineno", None)
    if first is None or last is None:
        return True
    text = "\n".join(ctx.lines[first - 1 : last])
    # `words` are those of the file's words: a few, each found (at C speed) and tested for
    # being a whole word where it occurs, instead of a split of the text into its words
    for word in words:
        size = len(word)
        i = text.find(word)
        while i >= 0:
            j = i + size
            if (i == 0 or text[i - 1] not in _WORD_CHARS) and text[j : j + 1] not in _WORD_CHARS:
                return True
            i = text.find(word, i + 1)
    return False


def function_holds(func: ast.AST, needles: tuple[str, ...], ctx: Context) -> bool:
    """Does the text of `func` hold one of `needles` (before its calls are collected)? The
    lines holding them are found once per file; a function asks for the first at or after
    its own first line."""
    first, last = getattr(func, "lineno", None), getattr(func, "end_lineno", None)
    if first is None or last is None:
        return True
    key = ("opaque.lines_holding", needles)
    lines = ctx.cache.get(key)
    if lines is None:
        text, lines = ctx.text, []
        for needle in needles:
            line, prev, pos = 1, 0, text.find(needle)
            while pos != -1:
                line += text.count("\n", prev, pos)
                lines.append(line)
                prev, pos = pos, text.find(needle, pos + 1)
        lines.sort()
        ctx.cache[key] = lines
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= last
