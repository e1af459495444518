"""The module namespace table (`astutil.module_bindings`, `Context.module_bindings`) and the
readings kept where the four walks it replaced disagreed (values.py `_bindings` of the
module, MS184 `_module_names`, MS144 `_module_names`, returns.py `_module_bindings`).

Where they differed, and what the table says:
- comprehension variables at module level: values.py counted them as bindings; they are
  not module names in Python 3 (`MODE` below still folds);
- `x: int` without a value: values.py, MS144 and returns.py counted it; it binds nothing;
- the names read in a subscript or attribute target (`A[i] = v`, `o.x = v`): MS144 and
  returns.py counted `A`, `i`, `o`; they are not bound there;
- imports: only MS184 counted them; definitions: values.py and MS184;
- bindings under module-level `if` / `for` / `while` / `with` / `try`, and `for` / `with`
  targets: values.py and MS184 only (MS144 and returns.py read top-level statements);
- `:=`: values.py only; `except ... as e` and `case` captures: none; `from m import *`:
  MS184 recorded a name "*", now left out (the names it binds are not known).
"""

from __future__ import annotations

import ast

from npu_lsp.astutil import module_bindings
from npu_lsp.config import Config
from npu_lsp.engine import Context, check_source
from npu_lsp.rules.graphmode import returns
from npu_lsp.rules.graphmode.values import UNKNOWN, instances
from npu_lsp.scope import ScopeResolver, summarize

ALL_KINDS = '''import os.path as osp, numpy
from m import *
from string import digits as D
X = 1
a, (b, *c) = 1, (2, 3, 4)
d[i] = 3
o.x = 4
y: int
z: int = 3
X += 1
for k in range(3):
    w = k
with open("f") as (f1, f2):
    pass
try:
    pass
except E as err:
    q = 1
if (n := 3):
    L = [m2 for v in range(3) if (m2 := v)]
def fn(a=(p := 1)):
    r = 1
class C:
    s = 1
lam = lambda: (t := 1)
match X:
    case [1, *rest] if (g := 1):
        pass
    case {"a": aa, **kw}:
        pass
'''


def _table(src: str, walrus: bool = True) -> dict[str, list[str]]:
    got = module_bindings(ast.parse(src).body, walrus)
    return {name: [type(n).__name__ for n in nodes] for name, nodes in got.items()}


def test_every_kind_of_module_binding_in_source_order() -> None:
    assert _table(ALL_KINDS) == {
        "osp": ["Import"],
        "numpy": ["Import"],
        "D": ["ImportFrom"],
        "X": ["Assign", "AugAssign"],
        "a": ["Assign"],
        "b": ["Assign"],
        "c": ["Assign"],
        "z": ["AnnAssign"],
        "k": ["For"],
        "w": ["Assign"],
        "f1": ["With"],
        "f2": ["With"],
        "err": ["ExceptHandler"],
        "q": ["Assign"],
        "n": ["NamedExpr"],
        "m2": ["NamedExpr"],  # `:=` in a comprehension binds in the module
        "L": ["Assign"],
        "p": ["NamedExpr"],  # a default is evaluated in the module
        "fn": ["FunctionDef"],
        "C": ["ClassDef"],
        "lam": ["Assign"],
        "g": ["NamedExpr"],
        "rest": ["match_case"],
        "aa": ["match_case"],
        "kw": ["match_case"],
    }
    # not bound: a comprehension variable (`v`), an annotation alone (`y`), the names read
    # in `d[i] = ...` / `o.x = ...`, locals of a function, class or lambda (`r`, `s`, `t`)
    assert {"v", "y", "d", "i", "o", "r", "s", "t", "*"}.isdisjoint(_table(ALL_KINDS))


def test_without_walrus_the_expressions_are_not_searched() -> None:
    table = _table(ALL_KINDS, walrus=False)
    assert {"n", "m2", "p", "g"}.isdisjoint(table) and table["L"] == ["Assign"]


def _context(src: str) -> Context:
    tree = ast.parse(src)
    return Context("/p/m.py", src, tree, Config(), ScopeResolver(tree, "/p/m.py", None, None, text=src))


def test_context_builds_the_table_once_and_reads_walrus_from_the_text() -> None:
    ctx = _context("X = 1\nprint(Y := 2)\n")
    assert ctx.module_bindings() is ctx.module_bindings()
    assert set(ctx.module_bindings()) == {"X", "Y"}


def test_a_module_level_comprehension_variable_does_not_unfold_a_constant() -> None:
    # values.py's walk counted `MODE` of the comprehension as a second binding: `if MODE ==
    # 1:` no longer folded and the dead branch's `asnumpy()` was reported under STRICT, a
    # false error (judged with MindSpore 2.10: the program compiles at both levels)
    src = "MODE = 1\nSQUARES = [MODE * MODE for MODE in range(3)]\nAS_IMPORT = 2\nimport AS_IMPORT\n"
    ctx = _context(src)
    values = instances(ctx)
    assert values.evaluate(ast.parse("MODE == 1", mode="eval").body, None) is True
    # a name both assigned and imported has no single value (the walk left imports out)
    assert values.evaluate(ast.parse("AS_IMPORT", mode="eval").body, None) is UNKNOWN
    strict = Config(syntax_level="strict")
    net = (
        "import mindspore as ms\nfrom mindspore import nn\n" + src.split("AS_IMPORT")[0]
        + "class Net(nn.Cell):\n    def construct(self, x):\n        if MODE == 1:\n"
        "            return x * 2\n        else:\n            return x.asnumpy()\n\n\nNet()(ms.Tensor(1.0))\n"
    )
    assert [d.code for d in check_source(net, "m.py", strict)] == []


def _formulas(src: str) -> dict[str, returns.Entry]:
    return summarize(ast.parse(src), "/p/m.py", "m").returns


def test_returns_reads_the_whole_module_namespace() -> None:
    const, unknown = (returns.CONST_, returns.K_CONST), (returns.CONST_, returns.K_UNKNOWN)
    # a function rebound under a module-level `if`, or by an import: no entry (the walk
    # read top-level assignments only)
    assert _formulas("def size(x):\n    return x.shape[0]\nif True:\n    size = len\n") == {}
    assert _formulas("def size(x):\n    return x.shape[0]\nfrom os import size\n") == {}
    # a module-level loop variable is a value, not a compile-time object: unknown
    assert _formulas("for K in range(3):\n    pass\ndef g(x):\n    return K\n")["g"][3] == unknown
    # an annotation alone binds nothing (the walk made `K` unknown)
    assert _formulas("K: int\ndef g(x):\n    return K\n")["g"][3] == const
    # literal assignments on both paths of an `if`, and `A[K] = ...` binding `A` only
    assert _formulas("if True:\n    K = 3\nelse:\n    K = 4\ndef g(x):\n    return K\n")["g"][3] == const
    assert _formulas("K = 3\nA = [0]\nA[K] = 1\ndef g(x):\n    return K\n")["g"][3] == const


GLOBAL_IN_COMPREHENSION = '''import numpy as np
import mindspore as ms
from mindspore import nn, Tensor

{binding}
net = nn.Dense(4, 2)
grad_fn = ms.grad(nn.WithLossCell(net, nn.MSELoss()), None, net.trainable_params())


@ms.jit
def check(x, y):
    grads = grad_fn(x, y)
    return all(g.abs().max() < LIMIT for g in grads)


print(check(Tensor(np.ones((2, 4), np.float32)), Tensor(np.zeros((2, 2), np.float32))))
'''


def test_ms144_sees_every_module_level_binding() -> None:
    # judged with MindSpore 2.10 (LAX and STRICT: "name 'LIMIT' is not defined") for a name
    # bound under a module-level `if`, by a module-level `for` and by `:=`; MS144's walk read
    # top-level assignments only and missed all three
    lax = Config(syntax_level="lax")
    for binding in (
        "if np.ones(1).sum() > 0:\n    LIMIT = 1e6",
        "for LIMIT in (1e6,):\n    pass",
        "print(LIMIT := 1e6)",
        "LIMIT = 1e6",  # (found before too)
    ):
        codes = [d.code for d in check_source(GLOBAL_IN_COMPREHENSION.format(binding=binding), "m.py", lax)]
        assert codes == ["MS144"], binding
