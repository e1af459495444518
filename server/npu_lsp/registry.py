"""The one table of rules: `@rule(...)` fills `RULES` (code -> rule class) at import time.

A rule is a class with metadata set by the decorator, the AST node types it wants to see
(`nodes`) and a `check(node, ctx)` generator of diagnostics::

    @rule(code="MS101", name="try-statement", severity="error", family="graphmode", fix="none")
    class TryStatement(Rule):
        '''## What it does ... (Ruff headings; this docstring is the rule's published doc)'''

        nodes = (ast.Try,)
        graph_only = True          # engine only calls check() for nodes inside a graph scope

        def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
            yield ctx.diagnostic(self, node, "`try` is not supported in graph mode")

Rules that do not look at Python at all (e.g. a JSON rank-table checker) register a
checker per file type with `engine.register_checker` instead, and still declare their
codes here with `nodes = ()` so `--select`, noqa and the docs know them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, ClassVar, Literal, TypeVar

from npu_lsp.diagnostics import SEVERITIES, Diagnostic, Severity

if TYPE_CHECKING:
    from npu_lsp.engine import Context

FixAvailability = Literal["always", "sometimes", "none"]
Group = Literal["stable", "preview", "deprecated", "removed"]

# family -> (code prefix, code pattern, description). Codes are never reused. Graph-mode codes
# filled MS101-MS199, so new ones go on at MS201: select "MS" (not "MS1") for all of them.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "internal": (
        "AL",
        r"AL0\d\d",
        "Ascend Lens itself: syntax errors, unreadable files, rule crashes",
    ),
    "graphmode": ("MS", r"MS[12]\d\d", "MindSpore GRAPH_MODE / @jit compile rules"),
    "migration": ("NPU", r"NPU2\d\d", "CUDA/torch to Ascend (torch_npu, MindSpore) migration"),
    "hccl": ("HCCL", r"HCCL3\d\d", "HCCL rank-table files"),
}

#: Substrings a file must contain for a family's rules to run at all (a rule may override this
#: with its own `triggers`). A cheap `in` test that keeps, e.g., torch migration rules from
#: walking a MindSpore-only file. Empty = always run.
FAMILY_TRIGGERS: dict[str, tuple[str, ...]] = {
    "internal": (),
    "graphmode": ("mindspore",),
    "migration": ("torch", "cuda", "nccl", "cudnn", "apex"),
    "hccl": (),
}

#: Packages a module must import (anywhere, any form) for a family's rules to run; a rule
#: may override this with its own `requires_imports`. Migration rules lint torch code only:
#: a "cuda" string in a file that never imports torch is not a device name. Empty = always.
FAMILY_IMPORTS: dict[str, tuple[str, ...]] = {
    "migration": ("torch", "torch_npu", "apex"),
}

_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
# A name says what is flagged, never what to do (Ruff convention).
_BANNED_NAME_PREFIXES = ("no-", "disallow-", "banned-", "avoid-", "use-", "prefer-")


class Rule:
    """Base class of every rule; the decorator fills the metadata class attributes."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    family: ClassVar[str]
    fix_availability: ClassVar[FixAvailability]
    group: ClassVar[Group]
    #: AST node types this rule's `check` is called for (one walk serves every rule).
    nodes: ClassVar[tuple[type[ast.AST], ...]] = ()
    #: When True the engine calls `check` only for nodes inside a graph scope (a function
    #: definition node counts as inside its own scope when it is compiled).
    graph_only: ClassVar[bool] = False
    #: When True (graph rules), the engine calls `check` only inside STRICT graph scopes.
    strict_only: ClassVar[bool] = False
    #: For rules on `ast.Call`: the called names that can trigger the rule (the last part of
    #: the call's resolved dotted name, or of the expression itself when it does not resolve:
    #: `ops.Parameter(...)` and `P(...)` after `from mindspore import Parameter as P` are both
    #: "Parameter"). The walk skips the rule for any other call; None = every call. (Only
    #: calls are filtered: a rule's other node types reach it whatever this says.)
    calls: ClassVar[frozenset[str] | None] = None
    #: For rules on `ast.Call`: the types of callee expression the rule can flag, e.g.
    #: `(ast.Attribute,)` for `x.m(...)` calls only; the walk skips the rule for calls of
    #: any other callee (`f(...)`). None = every callee. (Only calls are filtered.)
    callee: ClassVar[tuple[type[ast.AST], ...] | None] = None
    #: Substrings the file must contain for this rule to run; None = the family's default
    #: (`FAMILY_TRIGGERS`), () = always. A rule's own triggers hold even where the engine
    #: lifts the family default (graph rules for Cells whose base class is defined elsewhere).
    triggers: ClassVar[tuple[str, ...] | None] = None
    #: Packages the module must import for this rule to run; None = the family's default
    #: (`FAMILY_IMPORTS`), () = no requirement.
    requires_imports: ClassVar[tuple[str, ...] | None] = None
    #: Substrings of which the file must contain one for this rule to run, on top of its
    #: `triggers` (which a forced family lifts; these hold always): a rule that finds
    #: nothing in a file without, e.g., "lambda" says so here, and the engine leaves it out
    #: of the file's walk (one test per file instead of one call per node). () = no test.
    words: ClassVar[tuple[str, ...]] = ()

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        """For rules on `ast.Call`, beyond `calls` and `callee`: can a call of this callee
        expression type whose called name (as for `calls`) is `called` trigger the rule?
        `receiver` is the shape of an attribute callee's object: "self" (`self.m(...)`),
        "name" (`x.m(...)`), "self." (`self.h.m(...)`), "" for anything else and for other
        callees. Asked once per dispatch table, level and (callee type, name, receiver)
        (the walk keeps the answer), so a test on the name (e.g. "starts with a capital")
        costs nothing per call. The default (not overridden) is never called: every call."""
        return True

    def wants_assign(self, target: type[ast.AST] | None, value: type[ast.AST]) -> bool:
        """For rules on `ast.Assign`: can an assignment whose one target is of type `target`
        (None: several targets) and whose value is of type `value` trigger the rule? Asked
        once per dispatch table, level and pair of types (the walk keeps the answer); the
        rule's other node types reach it whatever this says. The default (not overridden)
        is never called: every assignment."""
        return True

    def wants_assigned_call(self, target: type[ast.AST] | None, callee: type[ast.AST]) -> bool:
        """For rules on `ast.Assign`, beyond `wants_assign`: can an assignment of a call
        whose callee expression is of type `callee` (`x = self.f(...)`: `ast.Attribute`)
        trigger the rule? Asked as `wants_assign` is (once per dispatch table, level and
        shape); the default (not overridden) is never called: every call."""
        return True

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        """For rules on `ast.Call`, a narrowing of `calls` for one file: the called names (as
        for `calls`) of this file's calls that can trigger the rule (e.g. the calls of the
        file's own compiled helpers), or None for every call `calls`, `callee` and
        `wants_call` admit. Asked once per file before the walk, after scope resolution (no
        node, scope or function in `ctx`). Override it only with a superset of the names
        `check` can report on; the default (not overridden) is never called."""
        return None

    def applies(self, ctx: Context) -> bool:
        """A test of the whole file, asked once after scope resolution and before the walk
        (with no node, scope or function in `ctx`): False when every `check` of this file
        would find nothing (a rule whose checks all start with the same per-file test, e.g.
        "does compiled code of this file call a fallback at all?"). The engine then leaves
        the rule out of the file's walk. Override it only with the very test `check` makes;
        the default (not overridden) is never called."""
        return True

    @classmethod
    def active_triggers(cls) -> tuple[str, ...]:
        return cls.triggers if cls.triggers is not None else FAMILY_TRIGGERS.get(cls.family, ())

    @classmethod
    def active_imports(cls) -> tuple[str, ...]:
        if cls.requires_imports is not None:
            return cls.requires_imports
        return FAMILY_IMPORTS.get(cls.family, ())

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """Yield diagnostics for `node`; `ctx` answers scope, name and span questions.

        Rules with `nodes = (ast.Module,)` are called once per file with the module and do
        their own targeted traversal."""
        return ()

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the "What it does" section, as one line."""
        doc = (cls.__doc__ or "").strip()
        body = doc.split("## What it does", 1)[-1].strip()
        para = body.split("\n\n", 1)[0]
        return " ".join(para.split())


RULES: dict[str, type[Rule]] = {}
_NAMES: dict[str, str] = {}

R = TypeVar("R", bound=type[Rule])


class RegistryError(ValueError):
    """A rule declaration is invalid (duplicate code or name, bad code for its family...)."""


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    family: str,
    fix: FixAvailability = "none",
    group: Group = "stable",
) -> Callable[[R], R]:
    """Register a rule class under `code`; refuses duplicate codes or names and malformed ones."""

    def register(cls: R) -> R:
        if family not in FAMILIES:
            raise RegistryError(
                f"{cls.__name__}: unknown family {family!r} (known: {sorted(FAMILIES)})"
            )
        if not re.fullmatch(FAMILIES[family][1], code):
            raise RegistryError(f"{cls.__name__}: code {code!r} does not fit family {family!r}")
        if code in RULES and RULES[code] is not cls:
            raise RegistryError(
                f"duplicate rule code {code} ({RULES[code].__name__}, {cls.__name__})"
            )
        if name in _NAMES and _NAMES[name] != code:
            raise RegistryError(f"duplicate rule name {name!r} ({_NAMES[name]}, {code})")
        if not _NAME_RE.match(name) or name.startswith(_BANNED_NAME_PREFIXES):
            raise RegistryError(
                f"{cls.__name__}: rule name {name!r} must be kebab-case and name the pattern"
            )
        if severity not in SEVERITIES:
            raise RegistryError(f"{cls.__name__}: severity {severity!r} not in {SEVERITIES}")
        if fix not in ("always", "sometimes", "none"):
            raise RegistryError(f"{cls.__name__}: fix availability {fix!r} invalid")
        cls.code, cls.name, cls.severity, cls.family = code, name, severity, family
        cls.fix_availability, cls.group = fix, group
        RULES[code] = cls
        _NAMES[name] = code
        return cls

    return register


def by_name(name: str) -> type[Rule] | None:
    """Look a rule up by its kebab-case name."""
    code = _NAMES.get(name)
    return RULES.get(code) if code else None


def load_all() -> dict[str, type[Rule]]:
    """Import every rule family so RULES is complete; returns RULES."""
    import npu_lsp.rules  # noqa: F401  (imports the families for their side effect)

    return RULES


def matches(code: str, selectors: Iterable[str]) -> bool:
    """True when `code` is selected by any selector: a full code, a prefix ("MS1", "NPU") or "ALL"."""
    return any(s == "ALL" or code.startswith(s) for s in selectors)
