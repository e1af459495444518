"""MindSpore GRAPH_MODE rules (MS1xx), following ../shared/reference/graphmode/RULES.md.

Every rule here is a `GraphRule`: the engine calls it only for nodes inside graph scopes
resolved by `npu_lsp.scope`. Error severity is reserved for what MindSpore 2.10 rejects at
the scope's syntax level; patterns that compile but behave differently are warnings.
"""

from npu_lsp.rules.graphmode import try_statement  # noqa: F401
