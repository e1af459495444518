"""Every kind of `match` pattern, wherever it can sit (compiled `construct`, a helper it calls,
`__init__`, an `@ms.jit` function, module level), with the names the patterns bind read
afterwards in the ways rules look at them: no rule may crash (AL003) at either level.

A `match_case` has no position of its own and patterns bind names without `ast.Name` nodes
(`MatchAs`, `MatchStar`, `MatchMapping.rest`): flow questions about such names once crashed
MS184 (written/heldout26b `match_dict_pattern_batch`, "'match_case' object has no attribute
'lineno'")."""

from __future__ import annotations

import textwrap

import pytest

from npu_lsp.config import Config
from npu_lsp.engine import check_source

# one match statement per pattern kind; every name a pattern binds is read after the match
MATCHES = {
    "value": 'match mode:\n    case "a":\n        y = x + 1\n    case 1 | 2:\n        y = x - 1\n    case _:\n        y = x\n',
    "singleton": "match flag:\n    case None:\n        y = x\n    case True:\n        y = x * 2\n    case _:\n        y = x\n",
    "sequence": "match shape:\n    case [a, *rest]:\n        y = x.reshape(a, -1)\n    case (a, b):\n        y = x\n    case [*_]:\n        y = x\n    case _:\n        y = x\nz = rest[0] + len(rest) + a\n",
    "mapping": 'match batch:\n    case {"image": img, "text": txt}:\n        y = img + txt\n    case {"image": img, **rest}:\n        y = img + rest["text"]\n    case _:\n        y = batch["text"]\nz = rest.get("k", 0)\nw = img.shape\nfor k in rest:\n    y = y + rest[k]\n',
    "class": "match spec:\n    case Point(x=px, y=py):\n        y = x * px + py\n    case Point(px, py):\n        y = x\n    case int(n):\n        y = x * n\n    case str(s):\n        y = x\n    case _:\n        y = x\nq = s.upper()\nr = s[0]\n",
    "as_or_guard": 'match item:\n    case [a] | (a, _) as whole:\n        y = x * a\n    case {"k": v} if v > 0:\n        y = x + v\n    case {"a": [b, {"c": d}]}:\n        y = x + b + d\n    case v:\n        y = x\nt = whole[0]\nu = v["k"]\n',
    "dotted": "match color:\n    case Color.RED:\n        y = x\n    case Color.GREEN | Color.BLUE:\n        y = -x\n    case _:\n        y = x\n",
    "nested": "for it in items:\n    match it:\n        case {\"n\": n}:\n            match n:\n                case [m, *ms_]:\n                    y = x + m\n                case _:\n                    y = x\n        case _:\n            y = x\nv = ms_[0]\n",
    # `match` and `case` are soft keywords: plain names and calls elsewhere
    "soft_keywords": "match = {\"k\": 1}\ncase = match[\"k\"]\ny = x + case\nmatch_ = match.get(\"k\")\n",
}

PREAMBLE = """
import mindspore as ms
from mindspore import nn, ops
from enum import Enum
from dataclasses import dataclass


class Color(Enum):
    RED = 1
    GREEN = 2
    BLUE = 3


@dataclass
class Point:
    x: int
    y: int


# module-level names of the same spelling as the parameters and pattern-bound names: rules
# ask about the module namespace too (MS184 at STRICT crashed on `batch["text"]` this way)
x = ops.ones((2, 3))
mode, flag, shape, batch, spec, item, color, items = 1, None, (2, 3), {"image": x, "text": x}, 3, (1,), None, ()
img = txt = rest = v = s = whole = a = b = d = n = m = px = py = "name"

"""


def _placements(body: str) -> dict[str, str]:
    """The same statements in each place compiled or plain-Python code can hold them."""
    params = "x, mode=1, flag=None, shape=(2, 3), batch=None, spec=3, item=(1,), color=None, items=()"
    inner = textwrap.indent(body + "return y\n", " " * 8)
    module = body.replace("return y\n", "")
    return {
        "construct": f"{PREAMBLE}class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n\n    def construct(self, {params}):\n{inner}\n\nnet = Net()\nnet(ops.ones((2, 3)))\n",
        "helper": f"{PREAMBLE}def helper({params}):\n{textwrap.indent(body + 'return y' + chr(10), ' ' * 4)}\n\nclass Net(nn.Cell):\n    def construct(self, x):\n        return helper(x, batch={{'image': x, 'text': x}})\n\n\nNet()(ops.ones((2, 3)))\n",
        "init": f"{PREAMBLE}class Net(nn.Cell):\n    def __init__(self, {params}):\n        super().__init__()\n{inner.replace('return y', 'self.y = y')}\n    def construct(self, t):\n        return t * self.y\n\n\nNet(1)(ops.ones((2, 3)))\n",
        "jit": f"{PREAMBLE}@ms.jit\ndef step({params}):\n{textwrap.indent(body + 'return y' + chr(10), ' ' * 4)}\n\nstep(ops.ones((2, 3)))\n",
        "module": f"{PREAMBLE}{module}",
    }


CASES = [(kind, where, src) for kind, body in MATCHES.items() for where, src in _placements(body).items()]


@pytest.mark.parametrize("level", ["lax", "strict"])
@pytest.mark.parametrize(("kind", "where", "src"), CASES, ids=[f"{k}-{w}" for k, w, _ in CASES])
def test_match_patterns_never_crash(kind: str, where: str, src: str, level: str) -> None:
    compile(src, f"{kind}-{where}.py", "exec")  # the generated program is valid Python
    diags = check_source(src, f"{kind}_{where}.py", Config(syntax_level=level))
    crashes = [d.message for d in diags if d.code == "AL003"]
    assert not crashes, crashes


def test_all_patterns_in_one_construct_never_crash() -> None:
    """All the statements above in one `construct`: names bound by one match reach the next."""
    body = "".join(MATCHES.values())
    src = _placements(body)["construct"]
    compile(src, "all.py", "exec")
    for level in ("lax", "strict"):
        diags = check_source(src, "all.py", Config(syntax_level=level))
        assert not [d.message for d in diags if d.code == "AL003"]
