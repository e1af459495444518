"""Applying fixes: the one implementation behind `ascend-lens check --fix/--diff` and the
language server's `source.fixAll.ascend-lens` action, so both produce the same text.

As `ruff check --fix` does:

- a fix is atomic: all of its edits land, or none;
- fixes are taken in source order; one whose edits overlap an edit already taken waits for
  the next round (edits identical to one already taken are shared, not conflicts: every
  migration fix carries the same `import torch_npu` insertion);
- unsafe fixes (`Fix.safe` false) are applied only when asked for (`--unsafe-fixes`);
- after each round the text is checked again, until no fix applies (at most `MAX_ROUNDS`);
- a round whose result no longer parses while the input did is dropped, so a faulty fix can
  never leave a broken file behind.
"""

from __future__ import annotations

import ast
import difflib
import logging
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from npu_lsp.config import Config
from npu_lsp.diagnostics import Diagnostic, Edit, Span, apply_edits, split_keepends
from npu_lsp.engine import WorkspaceIndex, check_path, check_source

log = logging.getLogger("npu_lsp.fixing")

#: Rounds of check-then-fix before giving up on reaching a fixpoint (ruff uses 100; our
#: fixes do not feed each other beyond a round or two).
MAX_ROUNDS = 10
BOM = b"\xef\xbb\xbf"


@dataclass
class FixOutcome:
    """What fixing one text did."""

    original: str
    text: str
    #: rule code -> how many of its diagnostics were fixed
    fixed: Counter[str] = field(default_factory=Counter)
    #: diagnostics of the fixed text
    remaining: list[Diagnostic] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def fixed_count(self) -> int:
        return sum(self.fixed.values())

    def hidden_unsafe(self, unsafe: bool) -> int:
        """Remaining diagnostics whose fix would apply with `--unsafe-fixes`."""
        if unsafe:
            return 0
        return sum(1 for d in self.remaining if d.fix is not None and not d.fix.safe)


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    """Does `diagnostic` carry a fix that this run may apply?"""
    fix = diagnostic.fix
    return fix is not None and bool(fix.edits) and (fix.safe or unsafe)


def _start(span: Span) -> tuple[int, int]:
    return span.line, span.column


def _end(span: Span) -> tuple[int, int]:
    return span.end_line, span.end_column


def conflicts(a: Edit, b: Edit) -> bool:
    """Do two different edits touch the same text (two insertions at one point do too)?"""
    if a == b:
        return False
    if _start(a.span) < _end(b.span) and _start(b.span) < _end(a.span):
        return True  # proper overlap
    a_point = _start(a.span) == _end(a.span)
    b_point = _start(b.span) == _end(b.span)
    if a_point and b_point:
        return _start(a.span) == _start(b.span)
    # an insertion strictly inside a replaced range
    if a_point:
        return _start(b.span) < _start(a.span) < _end(b.span)
    if b_point:
        return _start(a.span) < _start(b.span) < _end(a.span)
    return False


def choose(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> list[Diagnostic]:
    """The diagnostics whose fixes one round applies together, in source order."""
    ordered = sorted(
        (d for d in diagnostics if applicable(d, unsafe)),
        key=lambda d: (min(_start(e.span) for e in d.fix.edits), d.code),  # type: ignore[union-attr]
    )
    taken: list[Edit] = []
    taken_set: set[Edit] = set()
    chosen: list[Diagnostic] = []
    for d in ordered:
        assert d.fix is not None
        # edits already taken are shared (a group fix repeats its whole group in every
        # diagnostic), so only the others can conflict
        new = [e for e in dict.fromkeys(d.fix.edits) if e not in taken_set]
        if any(conflicts(e, t) for e in new for t in taken):
            continue
        if any(conflicts(e, f) for i, e in enumerate(new) for f in new[i + 1 :]):
            continue  # a malformed fix: its own edits overlap
        taken.extend(new)
        taken_set.update(new)
        chosen.append(d)
    return chosen


def edits_of(chosen: Sequence[Diagnostic]) -> list[Edit]:
    """The distinct edits of the chosen diagnostics' fixes (shared edits once)."""
    return list(dict.fromkeys(e for d in chosen if d.fix for e in d.fix.edits))


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def fix_source(
    text: str,
    path: str,
    config: Config | None = None,
    workspace: WorkspaceIndex | None = None,
    *,
    unsafe: bool = False,
) -> FixOutcome:
    """Apply every applicable fix to `text` (the content of `path`) until none is left."""
    config = config or Config()
    is_python = not path.endswith(".json")
    outcome = FixOutcome(original=text, text=text)
    current = text
    diagnostics = check_source(current, path, config, workspace)
    for _ in range(MAX_ROUNDS):
        chosen = choose(diagnostics, unsafe)
        if not chosen:
            break
        candidate = apply_edits(current, edits_of(chosen))
        if candidate == current:
            break
        if is_python and not parses(candidate) and parses(current):
            codes = ", ".join(sorted({d.code for d in chosen}))
            log.error("fixes of %s in %s would break the file; not applied", codes, path)
            break
        outcome.fixed.update(d.code for d in chosen)
        current = candidate
        diagnostics = check_source(current, path, config, workspace)
    outcome.text = current
    outcome.remaining = diagnostics
    return outcome


def unified_diff(path: str, before: str, after: str) -> str:
    """`before` -> `after` as a unified diff naming `path` on both sides (as `ruff --diff`)."""
    lines = difflib.unified_diff(
        split_keepends(before),
        split_keepends(after),
        fromfile=path,
        tofile=path,
    )
    out = []
    for line in lines:
        out.append(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        )
    return "".join(out)


def minimal_edit(before: str, after: str) -> Edit | None:
    """One edit turning `before` into `after`: the changed run of whole lines (None if equal).

    The language server sends this for fix-all, so the editor keeps its cursor and folding
    outside the lines that changed.
    """
    if before == after:
        return None
    old = split_keepends(before)
    new = split_keepends(after)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - head
        and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]
    ):
        tail += 1
    replaced = "".join(new[head : len(new) - tail])
    # old lines head .. len(old) - tail - 1 (0-based) are replaced; the end is exclusive
    return Edit(Span(head + 1, 1, len(old) - tail + 1, 1), replaced)


def summary(fixed: int, remaining: int, hidden: int) -> str:
    """The closing line of `check --fix` in text format (ruff's wording, our nouns)."""
    total = fixed + remaining
    if total == 0:
        return "All checks passed!\n"
    out = f"Found {total} {_problems(total)} ({fixed} fixed, {remaining} remaining).\n"
    if hidden:
        out += f"No more fixes available ({_hidden(hidden)}).\n"
    return out


def diff_summary(fixed: int, hidden: int) -> str:
    """The closing line of `check --diff` (written to stderr, as ruff does)."""
    extra = f" ({_hidden(hidden)})" if hidden else ""
    if fixed:
        return f"Would fix {fixed} {_problems(fixed)}{extra}.\n"
    return f"No problems would be fixed{extra}.\n"


def _problems(n: int) -> str:
    return "problem" if n == 1 else "problems"


def _hidden(n: int) -> str:
    fixes = "fix" if n == 1 else "fixes"
    return f"{n} hidden {fixes} can be enabled with the `--unsafe-fixes` option"


# ----------------------------------------------------------------------------- files
def fix_file(
    path: str, config: Config, workspace: WorkspaceIndex | None, *, unsafe: bool
) -> tuple[FixOutcome | None, bool]:
    """Fix the file's text (nothing is written); None when it cannot be read as text."""
    try:
        data = Path(path).read_bytes()
        if b"\x00" in data[:8192]:
            return None, False
        text = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None, False
    return fix_source(text, path, config, workspace, unsafe=unsafe), data.startswith(BOM)


def run_fix(
    files: Sequence[Path],
    config: Config,
    workspace: WorkspaceIndex | None,
    *,
    unsafe: bool,
    diff: bool,
    render: Callable[[list[tuple[str, Diagnostic]]], str],
    text_format: bool,
) -> int:
    """`check --fix` (write fixed files, print what remains) or `check --diff` (print the
    changes, write nothing). Exit status as ruff's: --fix 1 when problems remain, --diff 1
    when any file would change."""
    outcomes: list[FixOutcome] = []
    remaining: list[tuple[str, Diagnostic]] = []
    patches: list[str] = []
    for f in files:
        path = str(f)
        outcome, bom = fix_file(path, config, workspace, unsafe=unsafe)
        if outcome is None:  # the plain check explains why (AL002)
            remaining.extend((path, d) for d in check_path(path, config, workspace))
            continue
        outcomes.append(outcome)
        remaining.extend((path, d) for d in outcome.remaining)
        if not outcome.changed:
            continue
        if diff:
            patches.append(unified_diff(path, outcome.original, outcome.text))
        else:
            try:
                with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as fh:
                    fh.write(outcome.text)
            except OSError as exc:
                sys.stderr.write(f"ascend-lens: error: cannot write {path}: {exc.strerror}\n")
                return 2
    fixed = sum(o.fixed_count for o in outcomes)
    hidden = sum(o.hidden_unsafe(unsafe) for o in outcomes)
    if diff:
        sys.stdout.write("".join(patches))
        sys.stdout.flush()
        sys.stderr.write(diff_summary(fixed, hidden))
        return 1 if patches else 0
    if text_format:
        # the renderer's closing line counts findings only; ours also counts what was fixed
        body = render(remaining).splitlines(keepends=True)[:-1]
        sys.stdout.write("".join(body) + summary(fixed, len(remaining), hidden))
    else:
        sys.stdout.write(render(remaining))
    sys.stdout.flush()
    return 1 if remaining else 0
