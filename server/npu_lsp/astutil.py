"""Fast AST traversal helpers (the stdlib's `ast.walk` goes through two generator layers)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_AST = ast.AST


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """Direct children of `node`, in field order."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            out.extend(v for v in value if isinstance(v, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (depth-first, `node` included); order is unspecified."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        n = pop()
        yield n
        for name in n._fields:
            value = getattr(n, name, None)
            if type(value) is list:
                extend(v for v in value if isinstance(v, _AST))
            elif isinstance(value, _AST):
                stack.append(value)
