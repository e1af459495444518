"""MS184's closure scopes: the functions enclosing the compiled one, found through the
parents the engine records (`ctx.parent`) rather than by source position, and the calls of an
enclosing function by name (one index per file, none when its name is spelled once)."""

from __future__ import annotations

import ast

from npu_lsp.config import Config
from npu_lsp.engine import Context
from npu_lsp.rules.graphmode import str_subscript
from npu_lsp.scope import ScopeResolver

SRC = '''def outer(chars):
    class Holder:
        def method(self, i):
            return chars[i]

    def inner(i):
        return (lambda j: chars[j])(i)

    def defaults(i, pick=lambda j: chars[j]):
        return pick(i)

    return Holder, inner, defaults


outer("abc")
outer(chars="xyz")
'''


def _context() -> tuple[Context, dict[str, ast.AST]]:
    tree = ast.parse(SRC)
    ctx = Context("/p/m.py", SRC, tree, Config(), ScopeResolver(tree, "/p/m.py", None, None, text=SRC))
    named: dict[str, ast.AST] = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    named["inline"], named["default"] = sorted(lambdas, key=lambda n: n.lineno)
    return ctx, named


def _enclosing(name: str) -> list[str]:
    ctx, named = _context()
    ctx.function = named[name]
    return [getattr(f, "name", "lambda") for f in str_subscript._enclosing(ctx)]


def test_enclosing_functions_follow_the_scopes_not_the_lines() -> None:
    assert _enclosing("outer") == []
    assert _enclosing("method") == ["outer"]  # through the class: a closure of `outer`
    assert _enclosing("inner") == ["outer"]
    assert _enclosing("inline") == ["inner", "outer"]
    # a default is evaluated where `defaults` is defined: inside `outer`, not `defaults`
    # (the lines of `defaults` hold it, so the walk by position counted `defaults` too)
    assert _enclosing("default") == ["outer"]


def test_calls_of_an_enclosing_function_by_name() -> None:
    ctx, _named = _context()
    calls = str_subscript._calls_named("outer", ctx)
    assert [ctx.segment(c) for c in calls] == ['outer("abc")', 'outer(chars="xyz")']
    assert str_subscript._calls_named("defaults", ctx) == []  # spelled once: its `def`
    assert str_subscript._calls_named("pick", ctx) == [c for c in ast.walk(ctx.tree) if isinstance(c, ast.Call) and getattr(c.func, "id", None) == "pick"]
