"""Fast AST traversal helpers (the stdlib's `ast.walk` goes through two generator layers and
visits every `Load`/`Store` context object; rules never need those)."""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from npu_lsp.children import SCANNED, SCANNERS, scanner

_AST = ast.AST
# Fields that never hold child nodes worth visiting (contexts and scalars).
_SKIP_FIELDS = frozenset(
    {
        "ctx",
        "id",
        "attr",
        "arg",
        "kind",
        "type_comment",
        "level",
        "module",
        "is_async",
        "conversion",
        "op",  # operators (Add, Not, ...) are read from their parent, never visited
        "ops",
    }
)
#: Node types that never have children worth visiting.
LEAVES: frozenset[type] = frozenset({ast.Name, ast.Constant})
#: the comprehensions (each a scope of its own): a tuple for `isinstance`, a set for `type(n) in`
COMPREHENSIONS: tuple[type[ast.ListComp], type[ast.SetComp], type[ast.DictComp], type[ast.GeneratorExp]] = (
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
COMPREHENSION_TYPES: frozenset[type] = frozenset(COMPREHENSIONS)
#: Node type -> its child-holding fields (filled by `fields`; read directly by hot loops).
FIELDS: dict[type, tuple[str, ...]] = {}

#: statement type -> its fields holding nested statements, `except` clauses and `case`s
#: included (statements with none are absent)
STATEMENT_BLOCKS: dict[type[ast.AST], tuple[str, ...]] = {
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",),
    ast.Match: ("cases",),
    ast.match_case: ("body",),
}
if sys.version_info >= (3, 11):  # `try ... except*` (no ast.TryStar on 3.10)
    STATEMENT_BLOCKS[ast.TryStar] = ("body", "handlers", "orelse", "finalbody")
#: every field name of `STATEMENT_BLOCKS`: the fields holding statements, `except` clauses
#: or `case`s whatever the node type (a definition's `body` among them); the one list
#: scans that tell a statement's blocks from its expressions by field name read
BLOCK_FIELDS: frozenset[str] = frozenset(f for names in STATEMENT_BLOCKS.values() for f in names)


def fields(node_type: type) -> tuple[str, ...]:
    """The fields of an AST node type that can hold child nodes."""
    f = FIELDS.get(node_type)
    if f is None:
        f = FIELDS[node_type] = tuple(n for n in node_type._fields if n not in _SKIP_FIELDS)  # type: ignore[attr-defined]
    return f


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """Direct children of `node`, in field order (expression contexts left out)."""
    out: list[ast.AST] = []
    for name in FIELDS.get(type(node)) or fields(type(node)):
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out


def walk_list(node: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(node))`, same breadth-first order, without its generators (~2.5x
    faster; for hot scans of whole functions)."""
    todo: list[ast.AST] = [node]
    push = todo.append
    for n in todo:  # grows while iterated
        for name in n._fields:
            value = getattr(n, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, _AST):
                        push(child)
            elif isinstance(value, _AST):
                push(value)
    return todo


def branch_list(node: ast.AST) -> list[ast.AST]:
    """`walk_list` without the nodes that hold no others (names, constants, expression
    contexts, operators): every other node, in the same breadth-first order (dropping
    leaves leaves the order of the rest as it was). For scans looking for calls,
    assignments, loops or definitions; about twice as fast as `walk_list`. (Each node's
    children are pushed by its type's `children.scanner`, in field order.)"""
    todo: list[ast.AST] = [node]
    push = todo.append
    get_scanner = SCANNERS.get
    branched = _BRANCHED
    for n in todo:  # grows while iterated
        t = type(n)
        scan = get_scanner(t)
        if scan is None:
            scan = scanner(t)
        scan(n, push, branched)
    return todo


#: the node types `branch_list` keeps: every node type but names and constants
_BRANCHED: frozenset[type] = SCANNED | {ast.Attribute}


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """id(child) -> parent for every node under `tree`, expression contexts and operators
    included: what `ast.walk` + `ast.iter_child_nodes` give (same breadth-first order, so a
    shared `Load()` maps to the same last parent), without their generators (~2.5x faster)."""
    out: dict[int, ast.AST] = {}
    todo: list[ast.AST] = [tree]
    push = todo.append
    for node in todo:  # grows while iterated: breadth-first, as `ast.walk`
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, _AST):
                        out[id(child)] = node
                        push(child)
            elif isinstance(value, _AST):
                out[id(value)] = node
                push(value)
    return out


def statement_parents(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> parent for every statement, `except` handler and `case` under `tree`
    (the only places statements live): `parent_map` restricted to them, without visiting
    expressions."""
    out: dict[int, ast.AST] = {}
    todo: list[ast.AST] = [tree]
    push = todo.append
    get_blocks = BLOCKS_OF.get
    for node in todo:
        for name in get_blocks(type(node)) or blocks_of(type(node)):
            block = getattr(node, name, None)
            if type(block) is list:
                for child in block:
                    out[id(child)] = node
                    if get_blocks(type(child)) != ():  # most statements hold no block
                        push(child)
    return out


#: node type -> its fields of `BLOCK_FIELDS`, in field order (filled by `blocks_of`; hot
#: loops read it first)
BLOCKS_OF: dict[type, tuple[str, ...]] = {}


def blocks_of(t: type) -> tuple[str, ...]:
    """The fields of node type `t` holding statements, `except` clauses or `case`s, in field
    order (empty for a simple statement or an expression)."""
    names = BLOCKS_OF[t] = tuple(n for n in getattr(t, "_fields", ()) if n in BLOCK_FIELDS)
    return names


#: ASCII characters outside words -> a space (a text split on spaces into its words), and
#: word characters to themselves: `str.translate` caches each ASCII character's answer per
#: call, and a character the table lacks costs a raised and cleared KeyError first (most of
#: the time of a translate of a few hundred characters)
_NON_WORD: dict[int, int] = {
    c: c if (chr(c).isalnum() or chr(c) == "_") else ord(" ") for c in range(128)
}


def node_key(node: object) -> object:
    """A hashable form of an AST that two equal trees share (what comparing `ast.dump`s
    decides, load and store contexts aside), without the reference cycle `ast.dump`'s
    nested formatter leaves behind on every call."""
    if isinstance(node, ast.AST):
        return (type(node).__name__, *(node_key(getattr(node, f, None)) for f in node._fields if f != "ctx"))
    if isinstance(node, list):
        return tuple(node_key(x) for x in node)
    return node


def self_attr(e: ast.AST) -> str | None:
    """`self.x` -> "x"; None for anything else."""
    if type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self":
        return e.attr
    return None


def is_none_literal(e: ast.AST | None) -> bool:
    """Is `e` the literal `None`?"""
    return isinstance(e, ast.Constant) and e.value is None


_IDENTITY_OPS = (ast.Is, ast.IsNot)
_LOOSE_OPS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)
_NEGATED_OPS = (ast.IsNot, ast.NotEq)


def range_count(it: ast.AST) -> int | None:
    """N of `range(N)` written with a positive int literal (a loop MindSpore unrolls N times
    with known bounds); None for anything else."""
    if not (
        type(it) is ast.Call
        and type(it.func) is ast.Name
        and it.func.id == "range"
        and len(it.args) == 1
        and type(it.args[0]) is ast.Constant
        and type(it.args[0].value) is int
        and it.args[0].value > 0
    ):
        return None
    return it.args[0].value


def none_compared(test: ast.AST, loose: bool = False) -> tuple[ast.expr, bool] | None:
    """`x is None` -> (`x`, False), `x is not None` -> (`x`, True); anything else -> None.
    `loose` also takes `x == None` / `x != None` and `None` on the left (`None is x`)."""
    if not (type(test) is ast.Compare and len(test.ops) == 1):
        return None
    op = type(test.ops[0])
    if op not in (_LOOSE_OPS if loose else _IDENTITY_OPS):
        return None
    left, right = test.left, test.comparators[0]
    if is_none_literal(right):
        return left, op in _NEGATED_OPS
    if loose and is_none_literal(left):
        return right, op in _NEGATED_OPS
    return None


def ascii_words(text: str) -> list[str]:
    """The words (`\\w+`) of an ASCII text, its identifiers among them: a translate and a
    split, about 4x a `\\w+` search. (Not for other text: `ast` normalises identifiers.)"""
    return text.translate(_NON_WORD).split()


WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class WordCounts(Mapping[str, int]):
    """How often each word (`ascii_words`) occurs in an ASCII text, as a read-only mapping
    (iterated in no particular order). The distinct words are a set, built once; a word's
    count is found when first asked, by its occurrences in the text that no word character
    borders. Rules ask for a few counts ("class", "def", a name or two), and counting every
    word of a file (`collections.Counter`) cost about as much as its split (~15 M
    instructions on a 5,000-line file). Past `_FEW` counted words, every word is counted
    at once: a long series of questions costs no more than that."""

    _FEW = 8

    def __init__(self, text: str) -> None:
        self._text = text
        self._distinct = set(ascii_words(text))
        self._counted: dict[str, int] = {}
        self._all: Counter[str] | None = None

    def __getitem__(self, word: str) -> int:
        n = self.get(word)
        if n is None:
            raise KeyError(word)
        return n

    def get(self, word: str, default: int | None = None) -> int | None:  # type: ignore[override]
        if word not in self._distinct:
            return default
        n = self._counted.get(word)
        if n is None:
            n = self._counted[word] = self._count(word)
        return n

    def __contains__(self, word: object) -> bool:
        return word in self._distinct

    def __iter__(self) -> Iterator[str]:
        return iter(self._distinct)

    def __len__(self) -> int:
        return len(self._distinct)

    def _count(self, word: str) -> int:
        """The occurrences of `word` (a word of the text) that are whole words."""
        if self._all is None and len(self._counted) < self._FEW:
            text, find, size, n = self._text, self._text.find, len(word), 0
            i = find(word)
            while i >= 0:
                j = i + size
                if (i == 0 or text[i - 1] not in WORD_CHARS) and text[j : j + 1] not in WORD_CHARS:
                    n += 1
                i = find(word, j)
            return n
        if self._all is None:
            self._all = Counter(ascii_words(self._text))
        return self._all[word]


class TextWords:
    """`s in text` for many `s` and one file's text, with the text read once: a substring
    made of word characters (`ascii_words`) occurs in an ASCII text exactly when it occurs
    in one of the text's distinct words (an occurrence cannot cross a non-word character),
    so it is looked for in those words joined by spaces, a small fraction of a source file.
    A substring with other characters is absent when one of its word runs is; only when
    every run is present is the text itself searched. Non-ASCII text is always searched
    (the answers are those of `s in text` either way)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._counts: WordCounts | None = None
        # the distinct words, joined by spaces, with a space before the first and after the
        # last (built once): `" " + w` in it is a word starting with `w`, `w + " "` one
        # ending with it
        self._words: str | None = None
        self._ascii = text.isascii()
        self._chars: dict[str, bool] = {}  # `_has_chars`
        self._scanned: dict[str, bool] = {}  # `_in_text`
        # every answer, by the string asked (rules ask the same few strings per node:
        # MS238's "set_inputs" ~400 times on a 5,000-line file; the text never changes)
        self._asked: dict[str, bool] = {}

    def counts(self) -> WordCounts | None:
        """How often each word (`ascii_words`) occurs in the text; None for a text that is
        not ASCII."""
        if self._counts is None and self._ascii:
            self._counts = WordCounts(self.text)
        return self._counts

    def __contains__(self, s: str) -> bool:
        hit = self._asked.get(s)
        if hit is None:
            hit = self._asked[s] = self._contains(s)
        return hit

    def _contains(self, s: str) -> bool:
        """`s in self.text`, decided from the distinct words where they decide it."""
        if not self._ascii or not s.isascii():
            return s in self.text
        runs = ascii_words(s)
        if not runs:
            return self._in_text(s)  # `|`, `**`: no word to look up
        words = self._words
        if words is None:
            words = self._words = " " + " ".join(self.counts() or ()) + " "
        if len(runs) == 1 and runs[0] == s:
            return s in words
        # Where `s` occurs, each of its runs lies in one word of the text, and a run with a
        # non-word character of `s` before it starts that word, one with such a character
        # after it ends the word (`"str("`: a word ending in "str"; `".init"`: one starting
        # with "init"; `"type(self)("`: "self" a whole word). Without such a word `s` is
        # absent: the text is searched only when every run has one.
        last = len(runs) - 1
        starts = s[0] != runs[0][0]  # `s` starts with a non-word character
        ends = s[-1] != runs[last][-1]
        for k, r in enumerate(runs):
            if k or starts:
                r = " " + r
            if k < last or ends:
                r += " "
            if r not in words:
                return False
        return self._in_text(s)

    def _in_text(self, s: str) -> bool:
        """`s in text`, each `s` searched for once per file (several rules ask for `f"`)."""
        hit = self._scanned.get(s)
        if hit is None:
            hit = self._scanned[s] = self._has_chars(s) and (len(s) == 1 or s in self.text)
        return hit

    def _has_chars(self, s: str) -> bool:
        """Does the text hold each non-word character of `s` (ASCII)? A one-character
        search is a `memchr` (~18 k instructions on a 5,000-line file, remembered per
        character), a search for a longer string 200-800 k: `"f'"` passes the word test
        in any file with `self`, and many files have no `'`."""
        has = self._chars
        for c in s:
            if c in WORD_CHARS:
                continue
            hit = has.get(c)
            if hit is None:
                hit = has[c] = c in self.text
            if not hit:
                return False
        return True


#: The `TextWords` of the file `engine` is checking (set around its analysis, None between
#: files), for the word searches of scope resolution (`scope._word_lines`), which get only
#: the text: a word the text lacks is skipped without a scan of the text of its own.
_checked_words: TextWords | None = None


def set_checked_words(words: TextWords | None) -> None:
    global _checked_words
    _checked_words = words


def checked_words(text: str) -> TextWords | None:
    """The `TextWords` of `text` when it is the text being checked (the very object), else
    None (another thread's file, or no check under way: the caller scans)."""
    w = _checked_words
    return w if w is not None and w.text is text else None


def literal_alternation(words: Iterable[str]) -> str:
    """A regex matching exactly the strings `words` (escaped), as a trie: `sre` tries the
    alternatives of a group one after another, so at each position `a|ab|b` tests every
    word, while `(?:ab?|b)` tests each first character once. The same strings, so the
    same matches, as `"|".join(map(re.escape, words))`."""
    trie: dict[str, dict] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a word ends here: what follows is optional
            return body + "?" if len(alts) == 1 and len(alts[0]) == 1 else "(?:" + body + ")?"
        return body

    return emit(trie)


def is_name_char(c: str) -> bool:
    """Is `c` (one character, or "" past either end of a text) part of a name?"""
    return c.isalnum() or c == "_"


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (`node` included; expression contexts left out); any order."""
    stack = [node]
    pop, extend, append = stack.pop, stack.extend, stack.append
    get_fields = FIELDS.get
    while stack:
        n = pop()
        yield n
        for name in get_fields(type(n)) or fields(type(n)):
            value = getattr(n, name, None)
            if type(value) is list:
                extend(v for v in value if isinstance(v, _AST))
            elif isinstance(value, _AST):
                append(value)


#: Statements with no blocks to open (simple statements), and definitions, whose bodies are
#: another scope: `statements` yields them without looking inside.
NO_BLOCKS = frozenset(
    {
        ast.Assign,
        ast.AugAssign,
        ast.AnnAssign,
        ast.Expr,
        ast.Return,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.Raise,
        ast.Assert,
        ast.Delete,
        ast.Import,
        ast.ImportFrom,
        ast.Global,
        ast.Nonlocal,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
    }
)


def _inner_blocks(st: ast.stmt) -> list[ast.stmt]:
    """The statements of a `with` / `try` / `match` statement's blocks, in source order (the
    statement walks below open `if` / `for` / `while` themselves, the common case)."""
    blocks: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        blocks.extend(getattr(st, name, None) or [])
    for h in getattr(st, "handlers", None) or []:
        blocks.extend(h.body)
    for case in getattr(st, "cases", None) or []:
        blocks.extend(case.body)
    return blocks


def statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement in `body` and in the blocks of compound statements (no expressions,
    no nested function or class bodies), depth first. A list, not a generator: most callers
    read every statement, and a generator's resumption per statement cost more than the
    list."""
    out: list[ast.stmt] = []
    keep = out.append
    stack = body[::-1]
    pop, extend = stack.pop, stack.extend
    no_blocks, body_else = NO_BLOCKS, _BODY_ELSE
    while stack:
        st = pop()
        keep(st)
        t = type(st)
        if t in no_blocks:
            continue
        if t in body_else:
            extend(st.orelse[::-1])  # type: ignore[attr-defined]
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        extend(reversed(_inner_blocks(st)))
    return out


def source_statements(body: list[ast.stmt]) -> tuple[list[ast.stmt], bool]:
    """Every statement in `body` and in the blocks of its compound statements (not the
    bodies of nested functions or classes), depth first in source order (a `try`'s body,
    its handlers', its `else` and its `finally`, as `STATEMENT_BLOCKS` lists them), and
    whether a `try` is among them. The same statements as `statements` gives, in the same
    order when there is no `try` (which `statements` visits body, else, finally, handlers).
    One per function body for every question about its statements (`helpers.own_statements`)."""
    out: list[ast.stmt] = []
    keep = out.append
    stack = body[::-1]
    pop, extend = stack.pop, stack.extend
    no_blocks, body_else, blocks_of = NO_BLOCKS, _BODY_ELSE, STATEMENT_BLOCKS.get
    clause_t, case_t = ast.ExceptHandler, ast.match_case
    has_try = False
    while stack:
        st = pop()
        t = type(st)
        if t in no_blocks:  # (most statements)
            keep(st)
            continue
        if t in body_else:
            keep(st)
            extend(st.orelse[::-1])  # type: ignore[attr-defined]
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        if t is clause_t or t is case_t:
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        keep(st)
        names = blocks_of(t)
        if not names:
            continue
        if len(names) > 1:
            has_try = True  # (`Try` / `TryStar`: the only others with more than one block)
        inner: list[ast.stmt] = []  # (and `except` clauses, `case`s)
        for name in names:
            inner.extend(getattr(st, name))
        extend(inner[::-1])
    return out, has_try


def statements_of(body: list[ast.stmt], kind: type[ast.stmt]) -> list[ast.stmt]:
    """The statements of type `kind` among `statements(body)`, in the same order, without
    building the list of every statement (`helpers.returns_in` asks for every `if` of
    compiled code, most of whose blocks are a statement or two)."""
    out: list[ast.stmt] = []
    keep = out.append
    no_blocks = NO_BLOCKS
    for st in body:  # a block of simple statements (most): its own order, no stack
        t = type(st)
        if t not in no_blocks:
            out.clear()
            break
        if t is kind:
            keep(st)
    else:
        return out
    stack = body[::-1]
    pop, extend = stack.pop, stack.extend
    body_else = _BODY_ELSE
    while stack:
        st = pop()
        t = type(st)
        if t is kind:
            keep(st)
        if t in no_blocks:
            continue
        if t in body_else:
            extend(st.orelse[::-1])  # type: ignore[attr-defined]
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        extend(reversed(_inner_blocks(st)))
    return out


def _import_line_re(packages: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(re.escape(p) for p in packages)
    return re.compile(
        rf"^[ \t]*(?:import[ \t]+[\w., \t]*?\b(?:{names})\b|from[ \t]+(?:{names})\b)",
        re.MULTILINE,
    )


_IMPORT_RES: dict[tuple[str, ...], re.Pattern[str]] = {}


def imports_any(tree: ast.Module, text: str, packages: tuple[str, ...]) -> bool:
    """Does the module import any of `packages` (or a submodule) anywhere, functions included?

    A regex over the text finds candidate lines (most files have none: no tree access at
    all); a candidate counts only if an import statement of the package really starts
    there, so an `import torch` inside a docstring or string does not.
    """
    if not any(p in text for p in packages):
        return False  # the pattern below needs a name spelled out: a plain scan says no first
    pattern = _IMPORT_RES.get(packages)
    if pattern is None:
        pattern = _IMPORT_RES[packages] = _import_line_re(packages)
    lines: set[int] = set()
    line, at = 1, 0
    for m in pattern.finditer(text):  # counted on from the last match: linear in the text
        line += text.count("\n", at, m.start())
        at = m.start()
        lines.add(line)
    if not lines:
        return False
    last = max(lines)
    for node in all_statements(tree.body):
        if node.lineno > last:
            break  # statements come in source order: no candidate line is left
        if node.lineno not in lines:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(n.split(".", 1)[0] in packages for n in names):
            return True
    return False


def class_names(tree: ast.Module) -> set[str]:
    """The names of every class defined in the module, nested ones included."""
    return {st.name for st in all_statements(tree.body) if type(st) is ast.ClassDef}


def all_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement, nested function and class bodies included (no expressions), in
    source order (by starting line). A list, not a generator (a resumption per statement
    cost more than the list); simple statements are told apart by type before any field
    is read (most statements are simple)."""
    out: list[ast.stmt] = []
    keep = out.append
    stack = body[::-1]
    pop, extend = stack.pop, stack.extend
    simple, one_body, body_else = SIMPLE_STATEMENTS, _ONE_BODY, _BODY_ELSE
    while stack:
        st = pop()
        keep(st)
        t = type(st)
        if t in simple:
            continue
        if t in one_body:
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        if t in body_else:
            extend(st.orelse[::-1])  # type: ignore[attr-defined]
            extend(st.body[::-1])  # type: ignore[attr-defined]
            continue
        blocks: list[ast.stmt] = list(getattr(st, "body", None) or ())
        for h in getattr(st, "handlers", None) or ():  # handlers come before `else:`
            blocks.extend(h.body)
        for case in getattr(st, "cases", None) or ():
            blocks.extend(case.body)
        for name in ("orelse", "finalbody"):
            blocks.extend(getattr(st, name, None) or ())
        extend(reversed(blocks))
    return out


#: Statements with no blocks (`NO_BLOCKS` without the definitions)
SIMPLE_STATEMENTS = NO_BLOCKS - {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}
#: Statements whose only block is `body`, and those with `body` and `orelse`
_ONE_BODY = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith})
_BODY_ELSE = frozenset({ast.If, ast.For, ast.AsyncFor, ast.While})



def find_branches(node: ast.AST, kinds: frozenset[type]) -> list[ast.AST]:
    """The nodes of type `kinds` under `node` (itself included), never looking into names,
    constants or plain `a.b` attribute chains: for scans that look for calls, assignments
    and definitions only. One loop with no generator, in a fixed depth-first order (the
    children of a node pushed in field order, by its type's `children.scanner`)."""
    out: list[ast.AST] = []
    stack = [node]
    pop, append, keep = stack.pop, stack.append, out.append
    get_scanner = SCANNERS.get
    scanned = SCANNED
    while stack:
        n = pop()
        t = type(n)
        if t in kinds:
            keep(n)
        scan = get_scanner(t)
        if scan is None:
            scan = scanner(t)
        scan(n, append, scanned)
    return out


def store_names(target: ast.AST, out: set[str]) -> None:
    """Add the plain names a binding target assigns (`a`, `a, (b, *c)`; not `a[i]` or `a.b`)."""
    t = type(target)
    if t is ast.Name:
        out.add(target.id)  # type: ignore[attr-defined]
    elif t is ast.Tuple or t is ast.List:
        for elt in target.elts:  # type: ignore[attr-defined]
            store_names(elt, out)
    elif t is ast.Starred:
        store_names(target.value, out)  # type: ignore[attr-defined]


#: what a module-level name can be bound by without an assignment: a definition or an import
#: (`module_bindings`' nodes of these types bind a compile-time object, not a value)
DEFINITIONS_AND_IMPORTS: frozenset[type] = frozenset(
    {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom}
)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def module_bindings(body: list[ast.stmt], walrus: bool = True) -> dict[str, list[ast.AST]]:
    """Name -> the nodes that bind it in the module namespace, statements in source order
    (a statement's `:=` before its own targets, a compound statement's header before its
    blocks). What binds, and the node recorded:

    - `def` / `async def` / `class`: the definition (its body is another scope);
    - `import a.b` / `import a.b as c` / `from m import x as y`: the import statement
      (`a`, `c`, `y`); `from m import *` binds names not known here and is left out;
    - `=`, `+=`, `x: T = v` (an annotation without a value binds nothing), `for` / `async
      for` targets, `with ... as` targets: the statement; only plain names of a target
      (`a, (b, *c)`), not the names read in `a[i]` or `a.b`;
    - `except ... as e`: the handler; `case` capture patterns: the `case`;
    - `:=` in module-level expressions (comprehensions included, where `:=` binds in the
      module; not in lambda, function or class bodies): the `NamedExpr` (with `walrus`:
      callers pass False for a text without ":=", saving the walk of the expressions).

    Blocks of `if` / `for` / `while` / `with` / `try` / `match` at module level are
    searched; comprehension variables are not module names (Python 3), nor names a
    function declares `global` and assigns (not followed into function bodies)."""
    out: dict[str, list[ast.AST]] = {}
    stack: list[ast.AST] = list(reversed(body))
    pop, push = stack.pop, stack.extend
    while stack:
        st = pop()
        t = type(st)
        if walrus:
            for ne in _walruses(st, t):
                _bind(out, ne.target, ne)  # type: ignore[attr-defined]
        if t in _DEFS:
            out.setdefault(st.name, []).append(st)  # type: ignore[attr-defined]
            continue
        if t is ast.Import or t is ast.ImportFrom:
            for alias in st.names:  # type: ignore[attr-defined]
                if alias.name != "*":
                    out.setdefault(alias.asname or alias.name.partition(".")[0], []).append(st)
            continue
        if t is ast.Assign:
            for target in st.targets:  # type: ignore[attr-defined]
                _bind(out, target, st)
            continue
        if t is ast.AugAssign or (t is ast.AnnAssign and st.value is not None):  # type: ignore[attr-defined]
            _bind(out, st.target, st)  # type: ignore[attr-defined]
            continue
        if t is ast.For or t is ast.AsyncFor:
            _bind(out, st.target, st)  # type: ignore[attr-defined]
        elif t is ast.With or t is ast.AsyncWith:
            for item in st.items:  # type: ignore[attr-defined]
                if item.optional_vars is not None:
                    _bind(out, item.optional_vars, st)
        elif t is ast.ExceptHandler:
            if st.name:  # type: ignore[attr-defined]
                out.setdefault(st.name, []).append(st)  # type: ignore[attr-defined]
        elif t is ast.match_case:
            for p in ast.walk(st.pattern):  # type: ignore[attr-defined]
                name = getattr(p, "name", None) or getattr(p, "rest", None)
                if name:
                    out.setdefault(name, []).append(st)
        blocks = STATEMENT_BLOCKS.get(t)
        if blocks:
            inner: list[ast.AST] = []
            for name in blocks:
                inner.extend(getattr(st, name))
            push(reversed(inner))
    return out


def _bind(out: dict[str, list[ast.AST]], target: ast.AST, node: ast.AST) -> None:
    """Record `node` under each plain name the binding target assigns (source order)."""
    t = type(target)
    if t is ast.Name:
        out.setdefault(target.id, []).append(node)  # type: ignore[attr-defined]
    elif t is ast.Tuple or t is ast.List:
        for elt in target.elts:  # type: ignore[attr-defined]
            _bind(out, elt, node)
    elif t is ast.Starred:
        _bind(out, target.value, node)  # type: ignore[attr-defined]


def _walruses(st: ast.AST, t: type) -> list[ast.AST]:
    """The `:=` expressions a module-level statement (or `except` / `case`) evaluates in the
    module's scope: its own expressions, not its blocks, nor a definition's body, nor a
    lambda's body."""
    roots: list[ast.AST] = []
    for name in FIELDS.get(t) or fields(t):
        if name in BLOCK_FIELDS:
            continue  # statements (searched in turn), or a definition's body
        value = getattr(st, name, None)
        if type(value) is list:
            roots.extend(v for v in value if isinstance(v, _AST))
        elif isinstance(value, _AST):
            roots.append(value)
    found: list[ast.AST] = []
    while roots:
        n = roots.pop()
        if type(n) is ast.NamedExpr:
            found.append(n)
        for child in child_nodes(n):
            if type(n) is ast.Lambda and child is n.body:
                continue
            roots.append(child)
    found.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    return found
