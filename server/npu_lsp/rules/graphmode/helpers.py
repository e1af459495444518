"""Shared helpers for graph-mode rules: the base class and value-kind questions."""

from __future__ import annotations

from typing import ClassVar

from npu_lsp.registry import Rule

RULES_MD = "../shared/reference/graphmode/RULES.md"


class GraphRule(Rule):
    """A rule that only applies inside graph scopes (the engine skips eager code)."""

    graph_only: ClassVar[bool] = True
    #: Only report under STRICT (MindSpore's JIT Fallback makes LAX accept the pattern).
    strict_only: ClassVar[bool] = False
