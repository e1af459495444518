"""The pruned summary (`summary.portable`) drops statements without a `(` on their lines
unread when it knows the text: the copy must be exactly the one made by reading every
statement (what it makes without the text), whatever the line endings and layout."""

from __future__ import annotations

import ast
import pickle

import pytest

from npu_lsp.rules.migration.project import pending_facts
from npu_lsp.scope import summarize
from npu_lsp.summary import portable

SOURCE = '''import mindspore as ms
from mindspore import nn, ops
from .helpers import scale


def helper(x, k=ops.ones((2,))):
    y = x * k
    s = "not a call ( inside a string"
    if k:
        return y
    z = scale \\
        (y)
    w = (
        y
    )
    t = ops.add(
        x,
        scale(y),
    )
    return z


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)
        if True:
            class Inner:
                pass

    def construct(self, x):
        a = b = x
        for i in range(3):
            a = self.dense(a)
        else:
            b = a
        with ms.no_grad():
            pass
        lam = lambda v: helper(v)
        return lam
'''


def _pickled(text: str, with_text: bool) -> bytes:
    tree = ast.parse(text)
    info = summarize(tree, "/p/m.py", "pkg.m", text)
    return pickle.dumps(portable(info, text if with_text else None), protocol=5)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_dropping_statements_unread_keeps_the_copy(newline: str) -> None:
    text = SOURCE.replace("\n", newline)
    # columns depend on the text only for non-ASCII sources; this one is ASCII
    assert _pickled(text, True) == _pickled(text, False)


def test_dropped_statements_hold_no_call() -> None:
    tree = ast.parse(SOURCE)
    info = portable(summarize(tree, "/p/m.py", "pkg.m", SOURCE), SOURCE)
    kept = {
        (n.lineno, n.col_offset)
        for f in [*info.functions.values(), *(c.node for c in info.classes.values())]
        for n in ast.walk(f)
        if type(n) is ast.Call
    }
    every = {(n.lineno, n.col_offset) for n in ast.walk(tree) if type(n) is ast.Call}
    # every call of the file is inside a definition here, and each is kept (outermost
    # calls as copies, calls in callee expressions and arguments with them)
    assert kept == every
    helper = info.functions["helper"]
    returns = [n.value.id for n in ast.walk(helper) if type(n) is ast.Return]
    assert sorted(returns) == ["y", "z"]  # `return name` statements are kept without `(`


@pytest.mark.parametrize(
    ("text", "made"),
    [
        ("x = 1\n", False),
        ("DEVICE = 'npu'\n", True),
        ("# Cuda here\n", True),
        ("backEnd = 2\n", True),
        ("# \u00e9t\u00e9 sans rien\n", False),
        ("bac\u212aend = 1  # Kelvin sign: a case-insensitive match of 'k'\n", True),
        ("# \u00e9t\u00e9 NCCL\n", True),
    ],
)
def test_migration_facts_are_made_for_the_same_texts(text: str, made: bool) -> None:
    tree = ast.parse(text)
    info = summarize(tree, "/p/m.py", "pkg.m")
    assert (pending_facts(tree, info, text) is not None) is made
