"""`astutil.none_compared` and `is_none_literal`: the one reading of a None test that
none_join, held_callables, unsupported_python_call, values and runtime_scalar_randint share."""

from __future__ import annotations

import ast

import pytest

from npu_lsp.astutil import is_none_literal, none_compared


def _expr(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


@pytest.mark.parametrize(
    ("src", "strict", "loose"),
    [
        ("x is None", ("x", False), ("x", False)),
        ("x is not None", ("x", True), ("x", True)),
        ("x == None", None, ("x", False)),
        ("x != None", None, ("x", True)),
        ("None is x", None, ("x", False)),
        ("None != x", None, ("x", True)),
        ("x is y", None, None),
        ("x < None", None, None),
        ("a is None is b", None, None),
        ("x", None, None),
    ],
)
def test_none_compared(src: str, strict: tuple[str, bool] | None, loose: tuple[str, bool] | None) -> None:
    for kw, want in ((False, strict), (True, loose)):
        got = none_compared(_expr(src), loose=kw)
        assert (None if got is None else (ast.unparse(got[0]), got[1])) == want


def test_is_none_literal() -> None:
    assert is_none_literal(_expr("None"))
    assert not is_none_literal(_expr("0"))
    assert not is_none_literal(_expr("x"))
    assert not is_none_literal(None)
