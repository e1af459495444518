"""MS121: a run-time tensor used as a dict key."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: dict methods whose first argument is a key
_KEYED_METHODS = frozenset({"get", "pop", "setdefault"})


@rule(code="MS121", name="tensor-dict-key", severity="error", family="graphmode")
class TensorDictKey(GraphRule):
    """## What it does
    Flags dict keys in compiled code that are tensors computed at run time: in a dict
    display (`{x: 1}`), in a lookup or store (`d[x]`, `d[x] = v`) and in the key argument
    of `d.get(x)`, `d.pop(x)` and `d.setdefault(x)` on a dict (`for idx in indices:
    counts[idx] = counts.get(idx, 0) + 1`, with `indices` a tensor); and a store whose key is a
    run-time scalar read from a tensor (`d[int(t)] = v`, measured on 2.10 with the written
    probes `lax`, `dk_a`: rejected at both levels).

    ## Why is this bad?
    Graph dicts are resolved while compiling, so keys must be constants: strings, numbers,
    types, `None`, constant tensors or tuples of those. MindSpore stops with
    `RuntimeError: make_dict evaluator key only supports string, number, type, none, constant
    tensor and tuple, but got ValueAny` at every syntax level (`dict_getitem evaluator`,
    `dict_setitem evaluator` for lookups and stores).

    ## Example
    ```python
    def construct(self, x):
        d = {x: 1}
        return d
    ```

    ## Use instead
    Key by a constant name and keep the tensor as the value:
    ```python
    def construct(self, x):
        d = {"x": x}
        return d
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: dict key that is a variable tensor.
    """

    nodes = (ast.Dict, ast.Subscript, ast.Call)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if isinstance(node, ast.Subscript):
            # a tensor key is a name (`counts[idx]`); slices, constants and tuples never are,
            # and most subscripts in compiled code index tensors: skip them before any flow
            if type(node.slice) is ast.Name and type(node.value) in (ast.Name, ast.Attribute):
                yield from self._keyed(node.value, node.slice, ctx)
            elif (
                type(node.slice) is ast.Call
                and isinstance(node.ctx, ast.Store)
                and type(node.value) in (ast.Name, ast.Attribute)
            ):
                yield from self._stored(node.value, node.slice, ctx)
            return
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _KEYED_METHODS and node.args:
                yield from self._keyed(f.value, node.args[0], ctx)
            return
        assert isinstance(node, ast.Dict)
        a = analyzer(ctx)
        for key in node.keys:
            if key is not None and a.kind(key) == Kind.TENSOR:
                yield ctx.diagnostic(
                    self,
                    key,
                    f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict keys must be constants",
                )
                return

    def _keyed(self, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`d[key]`, `d.get(key)`...: MindSpore resolves dict lookups and stores while
        compiling (`dict_getitem` / `dict_setitem` evaluators), so a run-time tensor key
        fails as in a display."""
        a = analyzer(ctx)
        if a.type_class(receiver) != "dict" or a.kind(key) != Kind.TENSOR:
            return
        yield ctx.diagnostic(
            self,
            key,
            f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict lookups and stores need constant keys",
        )

    def _stored(self, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`d[int(t)] = v`: a run-time scalar read from a tensor as the key of a store
        (measured on 2.10: rejected at both levels, "dict_setitem evaluator key only supports
        string, number, type, none, constant tensor and tuple")."""
        a = analyzer(ctx)
        if a.type_class(receiver) != "dict" or not a.kind(key).dynamic:
            return
        yield ctx.diagnostic(
            self,
            key,
            f"dict key `{ctx.segment(key)}` is read from a tensor at run time; graph dict stores need constant keys",
        )

