"""Kinds from the graph-mode data flow: loop-carried bindings settle like a full fixpoint."""

from __future__ import annotations

import ast
import textwrap

from npu_lsp.config import Config
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.scope import ScopeResolver

SRC = textwrap.dedent(
    """
    from mindspore import nn


    class Net(nn.Cell):
        def construct(self, x):
            n = 0
            a = 0
            for i in range(3):
                y = n + 1
                a = b
                b = c
                c = x * 2
                n = x * 2
            z = 3
            return y, a, z
    """
)


def kinds(src: str) -> dict[str, Kind]:
    tree = ast.parse(src)
    ctx = Context("n.py", src, tree, Config(), ScopeResolver(tree, "n.py", text=src))
    func = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    ret = next(n for n in ast.walk(func) if isinstance(n, ast.Return))
    assert isinstance(ret.value, ast.Tuple)
    a = analyzer(ctx)
    return {e.id: a.kind(e, func) for e in ret.value.elts if isinstance(e, ast.Name)}


def test_names_read_before_a_later_binding_in_a_loop_get_its_kind() -> None:
    # `y` reads `n` before the loop body rebinds it to a tensor; `a` depends on a chain
    # (a <- b <- c <- x) written backwards, which needs three rounds to settle
    assert kinds(SRC) == {"y": Kind.TENSOR, "a": Kind.TENSOR, "z": Kind.CONST}
