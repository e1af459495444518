"""Hover content, as a pure function of (text, position): no pygls here.

Three things answer a hover:
- pyACL names (`acl.rt.malloc`, also through `import acl as x` / `from acl import rt`) and
  AscendCL or CUDA runtime names (`aclrtMalloc`, `cudaMalloc`): call shape, returns, CUDA twin;
- error constant names (`ACL_ERROR_RT_CONTEXT_NULL`, anywhere);
- six-digit ACL codes (`507011`) inside strings and comments, where logs get pasted.
Error text comes from the runtime's knowledge base (`npu_runtime.errors`), the one table that
the runtime, kernel and debugger also read.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from npu_lsp import api_table
from npu_lsp.columns import split_lines
from npu_lsp.diagnostics import Span

if TYPE_CHECKING:
    from npu_runtime.errors import ErrorInfo

_DOTTED = re.compile(r"[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*")
_CODE = re.compile(r"(?<![\w.])\d{6}(?![\w.])")
_IMPORT_AS = re.compile(r"^[ \t]*import[ \t]+acl[ \t]+as[ \t]+(\w+)", re.M)
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+acl[ \t]+import[ \t]+\(?([\w ,\t]+)", re.M)


@dataclass(frozen=True)
class HoverResult:
    """Markdown to show and the span of the word it is about (1-based, end exclusive)."""

    markdown: str
    span: Span


@cache
def _known_codes() -> frozenset[int]:
    from npu_runtime.errors import all_codes

    return frozenset(info.code for info in all_codes())


@cache
def _constants() -> dict[str, int]:
    from npu_runtime.errors import constants

    return dict(constants())


def hover(text: str, line: int, column: int, imports: str | None = None) -> HoverResult | None:
    """Hover for the 1-based (line, column) in `text` (columns in code points), or None.

    `imports` is the text whose `import acl` statements apply (the whole notebook when `text`
    is one cell of it); by default `text` itself.
    """
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return None
    source = lines[line - 1]
    index = column - 1
    for match in _CODE.finditer(source):
        if match.start() <= index < match.end():
            code = int(match.group())
            if code in _known_codes() and _in_string_or_comment(text, lines, line, match.start()):
                span = Span(line, match.start() + 1, line, match.end() + 1)
                return HoverResult(_error_markdown(code), span)
            return None
    for match in _DOTTED.finditer(source):
        if match.start() <= index < match.end():
            return _name_hover(text if imports is None else imports, source, line, match, index)
    return None


def _name_hover(
    imports: str, source: str, line: int, match: re.Match[str], index: int
) -> HoverResult | None:
    # The chain up to the hovered segment: hovering `rt` in `acl.rt.malloc` means `acl.rt`.
    end = source.find(".", index)
    end = match.end() if end == -1 or end > match.end() else end
    segment_start = max(source.rfind(".", match.start(), index + 1) + 1, match.start())
    segment_start += len(source[segment_start:end]) - len(source[segment_start:end].lstrip())
    chain = re.sub(r"\s+", "", source[match.start() : end])
    span = Span(line, segment_start + 1, line, end + 1)
    word = chain.rsplit(".", 1)[-1]
    if word in _constants():
        return HoverResult(_error_markdown(_constants()[word], word), span)
    entry = api_table.find(_resolve_acl(imports, chain)) or (
        api_table.find(word) if "." not in chain else None
    )
    if entry is None:
        return None
    return HoverResult(_api_markdown(entry), span)


def _resolve_acl(text: str, chain: str) -> str:
    """Rewrite a dotted name written through an alias of `acl` into its `acl.` form."""
    head, _, rest = chain.partition(".")
    if head == "acl":
        return chain
    if head in _IMPORT_AS.findall(text):
        return "acl" + ("." + rest if rest else "")
    for names in _FROM_IMPORT.findall(text):
        for item in names.split(","):
            parts = item.split()
            if parts and parts[-1] == head:  # `rt` or `rt as r` (then parts[-1] is the alias)
                return f"acl.{parts[0]}" + ("." + rest if rest else "")
    return chain


def _in_string_or_comment(text: str, lines: list[str], line: int, col: int) -> bool:
    """Is 0-based `col` of 1-based `line` inside a string literal or a comment?"""
    source = lines[line - 1]
    # Fast path: the line on its own usually tokenizes and answers the question.
    verdict = _token_kind_at(source + "\n", 1, col)
    if verdict is not None and verdict != "code":
        return True
    # Code-looking text may sit inside a multi-line string. Counting triple quotes before it
    # (C-speed, unlike tokenizing a 100,000-line prefix on every hover) tells us; quotes
    # inside comments or other strings can fool it, which costs at most a missing hover.
    before = "\n".join(lines[: line - 1])
    for quote in ('"""', "'''"):
        if before.count(quote) % 2 == 1 and quote not in source[:col]:
            return True
    return False


def _token_kind_at(source: str, line: int, col: int) -> str | None:
    """ "literal" (string/comment), "code", or None when `source` does not tokenize."""
    literal = {tokenize.STRING, tokenize.COMMENT}
    literal |= {getattr(tokenize, n) for n in ("FSTRING_MIDDLE",) if hasattr(tokenize, n)}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.start <= (line, col) < tok.end:
                return "literal" if tok.type in literal else "code"
            if tok.start[0] > line:
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # An unterminated triple-quoted string reaching the end of `source` means we are in it.
        return "literal" if '"""' in source or "'''" in source else None
    return "code"


def _error_markdown(code: int, written: str | None = None) -> str:
    from npu_runtime.errors import lookup

    info: ErrorInfo = lookup(code)
    title = f"**{info.name}** = `{info.code}`"
    if written and written != info.name:
        title = f"**{written}** = `{info.code}` (also `{info.name}`)"
    parts = [title + (f" ({info.family})" if info.family else "")]
    if info.meaning:
        parts.append(info.meaning)
    if info.cause:
        parts.append(f"**Cause:** {info.cause}")
    if info.fix:
        parts.append(f"**Fix:** {info.fix}")
    return "\n\n".join(parts)


def _api_markdown(entry: api_table.ApiEntry) -> str:
    parts = [f"```python\n{entry.signature}  # -> {entry.returns}\n```"]
    twins = []
    if entry.c:
        twins.append(f"AscendCL: `{entry.c}`")
    twins.append(f"CUDA: `{entry.cuda}`" if entry.cuda else "CUDA: no direct equivalent")
    parts.append(" · ".join(twins))
    if entry.note:
        parts.append(entry.note[0].upper() + entry.note[1:] + ".")
    return "\n\n".join(parts)
