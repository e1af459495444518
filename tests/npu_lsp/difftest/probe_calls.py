#!/usr/bin/env python3
"""Derive MindSpore 2.10's call tables for compiled code, as data (never run in CI).

Usage: probe_calls.py [--python PY]   (writes server/npu_lsp/rules/graphmode/ms_calls.json)

Two sources, both MindSpore itself:
* its parser's resource tables (`mindspore/graph/_parse/resources.py`, `parser.py`): which
  builtins the graph compiler implements (`convert_object_map`, `convert_class_to_function_map`),
  which builtin types it refuses to build (`_unsupported_python_builtin_type`), which calls it
  folds as constants, and which list methods survive as bare statements;
* compiling one tiny `@ms.jit` function per method of list, tuple, dict and str (and per
  keyword argument of the builtins it implements) at LAX and at STRICT, on constant receivers
  and on containers holding tensors, and keeping MindSpore's verdict and message.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures" / "ms210"))
from judge import DEFAULT_PY  # noqa: E402

OUT = HERE.parents[2] / "server" / "npu_lsp" / "rules" / "graphmode" / "ms_calls.json"

# Receivers: a constant and, where MindSpore treats it differently, one holding tensors.
RECEIVERS = {
    "list": ("[3.0, 1.0, 2.0]", "[x, x + 1]"),
    "tuple": ("(3, 1, 2)", "(x, x + 1)"),
    "dict": ("{'a': 1.0, 'b': 2.0}", "{'a': x, 'b': x + 1}"),
    "str": ("'alpha_beta'", None),
    "slice": ("slice(1, 3)", None),
}
# Arguments for methods that need some (constant receiver / tensor receiver).
ARGS = {
    ("list", "append"): ("4.0", "x"), ("list", "extend"): ("[4.0]", "[x]"), ("list", "insert"): ("0, 4.0", "0, x"),
    ("list", "remove"): ("1.0", "v[0]"), ("list", "index"): ("1.0", "v[0]"), ("list", "count"): ("1.0", "v[0]"),
    ("list", "pop"): ("0", "0"), ("list", "__getitem__"): ("0", "0"), ("list", "__contains__"): ("1.0", "1.0"),
    ("list", "__add__"): ("[1.0]", "[x]"), ("list", "__mul__"): ("2", "2"),
    ("tuple", "index"): ("1", "v[0]"), ("tuple", "count"): ("1", "v[0]"), ("tuple", "__getitem__"): ("0", "0"),
    ("dict", "get"): ("'a'", "'a'"), ("dict", "pop"): ("'a'", "'a'"), ("dict", "setdefault"): ("'c', 1.0", "'c', x"),
    ("dict", "update"): ("{'c': 3.0}", "{'c': x}"), ("dict", "fromkeys"): ("['a', 'b'], 1.0", "['a', 'b'], x"),
    ("dict", "__getitem__"): ("'a'", "'a'"), ("dict", "__contains__"): ("'a'", "'a'"), ("dict", "__or__"): ("{'c': 1.0}", "{'c': x}"),
    ("str", "format"): ("1",), ("str", "split"): ("'_'",), ("str", "rsplit"): ("'_'",), ("str", "join"): ("['a', 'b']",),
    ("str", "replace"): ("'a', 'b'",), ("str", "startswith"): ("'a'",), ("str", "endswith"): ("'a'",),
    ("str", "find"): ("'a'",), ("str", "rfind"): ("'a'",), ("str", "index"): ("'a'",), ("str", "rindex"): ("'a'",),
    ("str", "count"): ("'a'",), ("str", "center"): ("12",), ("str", "ljust"): ("12",), ("str", "rjust"): ("12",),
    ("str", "zfill"): ("12",), ("str", "partition"): ("'_'",), ("str", "rpartition"): ("'_'",), ("str", "strip"): ("'a'",),
    ("str", "lstrip"): ("'a'",), ("str", "rstrip"): ("'a'",), ("str", "__getitem__"): ("0",), ("str", "__contains__"): ("'a'",),
    ("str", "__add__"): ("'x'",), ("str", "__mul__"): ("2",), ("str", "expandtabs"): ("4",),
    ("str", "removeprefix"): ("'al'",), ("str", "removesuffix"): ("'ta'",), ("str", "encode"): ("",),
    ("str", "translate"): ("{97: 98}",), ("str", "maketrans"): ("'a', 'b'",), ("str", "format_map"): ("{}",),
    ("str", "__mod__"): ("()",), ("str", "splitlines"): ("",), ("slice", "indices"): ("5",),
}
SKIP = {"__class__", "__init__", "__new__", "__init_subclass__", "__subclasshook__", "__getattribute__", "__setattr__",
        "__delattr__", "__reduce__", "__reduce_ex__", "__sizeof__", "__dir__", "__format__", "__getnewargs__",
        "__class_getitem__", "__hash__", "__doc__", "__setitem__", "__delitem__", "__iadd__", "__imul__", "__ior__",
        "__rmul__", "__ror__", "__reversed__", "__iter__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__",
        "__gt__", "__ge__", "__rmod__", "__len__", "__bool__"}

# Keyword arguments of the builtins the graph implements, as Python accepts them.
BUILTIN_KWARGS = {
    "max": ["max([1, 2], key=abs)", "max([1, 2], default=0)", "max(x, key=None)"],
    "min": ["min([1, 2], key=abs)", "min([1, 2], default=0)"],
    "sum": ["sum([1, 2], start=1)"],
    "round": ["round(number=2.5)", "round(2.567, ndigits=1)", "round(2.75)", "round(2.75, 1)", "round(0.5)", "round(x)"],
    "enumerate": ["list(enumerate([1, 2], start=1))"],
    "zip": ["list(zip([1], [2], strict=True))"],
    "print": ["print('a', sep='-')", "print('a', end='')", "print('a', flush=True)", "print('a', file=None)"],
    "int": ["int('11', base=2)", "int(x='3')"],
    "float": ["float(x='1.5')"],
    "bool": ["bool(x=1)"],
    "str": ["str(object=1)", "str(b'a', encoding='utf-8')"],
    "isinstance": ["isinstance(obj=1, class_or_tuple=int)"],
    "getattr": ["getattr(x, 'shape', None)"],
    "range": ["list(range(3))"],
    "map": ["list(map(abs, [1, -2]))"],
    "filter": ["list(filter(None, [0, 1]))"],
    "len": ["len(obj=[1])"],
    "abs": ["abs(x=-1)"],
    "pow": ["pow(2, 3, mod=5)", "pow(base=2, exp=3)"],
    "list": ["list(iterable=(1, 2))"],
    "tuple": ["tuple(iterable=[1, 2])"],
    "hasattr": ["hasattr(x, 'shape')"],
    "sorted": ["sorted([2, 1], key=abs)", "sorted([2, 1], reverse=True)"],
}

RUNNER = r"""
import importlib.util, json, sys
import numpy as np
import mindspore as ms
ms.set_context(mode=ms.GRAPH_MODE)
spec = importlib.util.spec_from_file_location("probes", sys.argv[1])
mod = importlib.util.module_from_spec(spec); sys.modules["probes"] = mod; spec.loader.exec_module(mod)
x = ms.Tensor(np.ones((2,), np.float32))
out = {}
for name in json.loads(sys.argv[2]):
    try:
        getattr(mod, name)(x)
        out[name] = ["accept", ""]
    except BaseException as e:
        out[name] = ["reject", (type(e).__name__ + ": " + str(e)).split("\n")[0][:200]]
print("@@" + json.dumps(out))
"""


def method_probes() -> dict[str, tuple[str, str, str, str]]:
    """probe name -> (type, method, receiver kind, source)."""
    probes = {}
    for tname, (const, var) in RECEIVERS.items():
        typ = {"list": list, "tuple": tuple, "dict": dict, "str": str, "slice": slice}[tname]
        for meth in sorted(dir(typ)):
            if meth in SKIP or not callable(getattr(typ, meth, None)):
                continue  # not a method (`slice.start` is a data attribute)
            args = ARGS.get((tname, meth), ("", ""))
            for kind, recv, arg in (("const", const, args[0]), ("tensor", var, args[-1] if len(args) > 1 else None)):
                if recv is None or arg is None:
                    continue
                if kind == "tensor" and tname == "str":
                    continue
                call = f"type(v).{meth}(v{', ' + arg if arg else ''})" if meth == "fromkeys" else f"v.{meth}({arg})"
                name = f"m_{tname}_{meth}_{kind}"
                probes[name] = (tname, meth, kind, f"    v = {recv}\n    r = {call}\n    return x, r\n")
    return probes


# Operations on a receiver that are not method calls: name -> expression on `v`.
OPERATIONS = {"len()": "len(v)", "+": "v + v", "*": "v * 2", "[0]": "v[0]", "[1:]": "v[1:]", "for": "[e for e in v]",
              "in": "'a' in v", "|": "v | v", "bool()": "bool(v)", "str()": "str(v)", "list()": "list(v)", "tuple()": "tuple(v)"}


# Methods called with keyword arguments: (type, method) -> argument text; stored as "method(kw)".
METHOD_KWARGS = {("dict", "update"): "c=3.0", ("str", "format"): "a=1", ("str", "split"): "sep='_'",
                 ("list", "sort"): "reverse=True", ("str", "replace"): "'a', 'b', count=1",
                 ("str", "startswith"): "'a', 0"}


def operation_probes() -> dict[str, tuple[str, str, str, str]]:
    probes = {}
    for tname, (const, var) in RECEIVERS.items():
        for op, expr in OPERATIONS.items():
            for kind, recv in (("const", const), ("tensor", var)):
                if recv is not None:
                    key = "".join(c if c.isalnum() else "_" for c in op)
                    probes[f"o_{tname}_{key}_{kind}"] = (tname, op, kind, f"    v = {recv}\n    r = {expr}\n    return x, r\n")
    for (tname, meth), arg in METHOD_KWARGS.items():
        text = ("'{a}'" if meth == "format" else RECEIVERS[tname][0])
        probes[f"k_{tname}_{meth}"] = (tname, f"{meth}(kw)", "const", f"    v = {text}\n    r = v.{meth}({arg})\n    return x, r\n")
        if RECEIVERS[tname][1] is not None:  # `d.update(c=x)` on a dict of tensors too
            held = RECEIVERS[tname][1]
            probes[f"k_{tname}_{meth}_tensor"] = (tname, f"{meth}(kw)", "tensor", f"    v = {held}\n    r = v.{meth}({arg})\n    return x, r\n")
    return probes


def builtin_probes() -> dict[str, tuple[str, str, str, str]]:
    probes = {}
    for fn, calls in BUILTIN_KWARGS.items():
        for i, call in enumerate(calls):
            probes[f"b_{fn}_{i}"] = ("builtin", fn, call, f"    r = {call}\n    return x, r\n")
    return probes


def run(py: str, src: Path, names: list[str], env_extra: dict[str, str]) -> dict[str, list[str]]:
    env = {**os.environ, **env_extra, "GLOG_v": "3"}
    p = subprocess.run([py, "-c", RUNNER, str(src), json.dumps(names)], env=env, capture_output=True, text=True, timeout=900)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@")), None)
    if line is None:
        raise SystemExit(f"probe run failed: {p.stderr[-500:]}")
    return json.loads(line[2:])


# Reads of Cell and Parameter attributes in `construct` (one module per attribute: a class
# body cannot be shared), run at LAX; rejections that name the attribute are kept.
ATTR_RUNNER = r"""
import importlib.util, json, sys
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor, Parameter
ms.set_context(mode=ms.GRAPH_MODE)
folder, which = sys.argv[1], sys.argv[2]
owner = nn.Cell if which == "cell" else Parameter
names = [n for n in dir(owner) if not n.startswith("_")]
out = {}
for n in names:
    recv = "self" if which == "cell" else "self.w"
    src = ("import numpy as np\nfrom mindspore import nn, Tensor, Parameter\n\n\n"
           "class P(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
           "        self.w = Parameter(Tensor(np.ones((2,), np.float32)), name='w')\n\n"
           f"    def construct(self, x):\n        r = {recv}.{n}\n        if r is None:\n"
           "            x = x + 1\n        return x\n")
    path = f"{folder}/attr_{which}_{n}.py"
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"attr_{which}_{n}", path)
    mod = importlib.util.module_from_spec(spec); sys.modules[spec.name] = mod; spec.loader.exec_module(mod)
    try:
        mod.P()(Tensor(np.ones((2,), np.float32)))
    except BaseException as e:
        out[n] = (type(e).__name__ + ": " + str(e)).split("\n")[0][:200]
print("@@" + json.dumps(out))
"""


def attribute_tables(py: str) -> dict[str, dict[str, str]]:
    """Cell / Parameter attributes compiled code may not read -> MindSpore's message."""
    out: dict[str, dict[str, str]] = {}
    for which in ("cell", "parameter"):
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run([py, "-c", ATTR_RUNNER, tmp, which], capture_output=True, text=True,
                               timeout=1800, env={**os.environ, "GLOG_v": "3"})
        line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@")), None)
        if line is None:
            raise SystemExit(f"attribute probe failed: {p.stderr[-500:]}")
        said: dict[str, str] = json.loads(line[2:])
        # keep what MindSpore refuses by name (forbidden APIs, generator methods), not probe
        # artefacts (attributes this probe's cell never set)
        out[f"{which}_attributes"] = {
            n: m for n, m in said.items() if "Failed to compile in GRAPH_MODE" in m or "'Yield'" in m
        }
    return out


def resource_tables(py: str) -> dict[str, object]:
    code = r"""
import builtins, json
from mindspore.graph._parse import resources as R, parser as P
names = {id(getattr(builtins, n)): n for n in dir(builtins)}
def bname(o):
    return names.get(id(o))
print(json.dumps({
  "graph_builtins": sorted(n for n in (bname(k) for k in R.convert_object_map) if n),
  "class_functions": sorted(k.split("'")[1] for k in R.convert_class_to_function_map),
  # functions of the standard library the graph converts to its own (`functools.partial`,
  # `operator.add`): compiled, not interpreted
  "graph_functions": sorted(
      f"{k.__module__.lstrip('_')}.{k.__name__}" for k in R.convert_object_map
      if getattr(k, "__module__", None) in ("functools", "_operator", "operator") and bname(k) is None
  ),
  "constant_fold": sorted(n for n in (bname(k) for k in R.constant_fold_functions) if n),
  "unsupported_builtin_types": sorted(t.__name__ for t in P._unsupported_python_builtin_type),
  "expression_statement_methods": list(P.parse_expr_statement_white_list),
}))
"""
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, env={**os.environ, "GLOG_v": "3"})
    return json.loads(p.stdout.strip().splitlines()[-1])


def side_effect_table(py: str) -> dict[str, list[str]]:
    """The third-party calls MindSpore's parser marks as side effects
    (`Parser.check_third_party_library_side_effect`): module -> attributes. It never
    constant-folds `module.attr(...)` for these, so STRICT refuses them ("found variable
    '__call_func_str__' to be nonconstant") and LAX runs them at run time. Only modules
    MindSpore treats as third-party (the standard library, its whitelist) are kept."""
    code = r'''
import ast, importlib, inspect, json, textwrap
from mindspore.graph._parse import parser as P
from mindspore.graph._parse.jit_fallback_modules.check_utils import third_party_checker
from mindspore.graph._parse.jit_fallback_modules.third_party_modules import third_party_modules_whitelist
src = textwrap.dedent(inspect.getsource(P.Parser.check_third_party_library_side_effect))
table = {}
for node in ast.walk(ast.parse(src)):
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "side_effect_attrs":
        table = ast.literal_eval(node.value)
def third_party(m):
    try:
        return third_party_checker.is_third_party_module(importlib.import_module(m))
    except ImportError:
        return m in third_party_modules_whitelist
print(json.dumps({m: sorted(a) for m, a in table.items() if third_party(m)}))
'''
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=300, env={**os.environ, "GLOG_v": "3"})
    out: dict[str, list[str]] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=str(DEFAULT_PY))
    args = ap.parse_args()
    probes = {**method_probes(), **operation_probes(), **builtin_probes()}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probes.py"
        src.write_text("import mindspore as ms\n\n" + "".join(f"@ms.jit\ndef {n}(x):\n{p[3]}\n\n" for n, p in probes.items()))
        eager = run(args.python, src, list(probes), {"MS_JIT": "0"})
        lax = run(args.python, src, list(probes), {})
        strict = run(args.python, src, list(probes), {"MS_DEV_JIT_SYNTAX_LEVEL": "0"})
    methods: dict[str, dict[str, dict[str, object]]] = {}
    kwargs: dict[str, dict[str, object]] = {}
    for name, (tname, meth, kind, _src) in probes.items():
        if eager[name][0] != "accept":
            continue  # not valid Python with these arguments: measures nothing
        verdict = {"lax": lax[name][0], "strict": strict[name][0]}
        said = {lv: res[name][1] for lv, res in (("lax", lax), ("strict", strict)) if res[name][0] == "reject"}
        if tname == "builtin":
            kwargs.setdefault(meth, {})[kind] = {**verdict, "message": said}
        else:
            methods.setdefault(tname, {}).setdefault(meth, {})[kind] = {**verdict, "message": said}
    data = {
        "_about": "MindSpore 2.10 call tables for compiled code, written by tests/npu_lsp/difftest/probe_calls.py "
        "from MindSpore's parser resource tables and from compiling one probe per call at LAX and STRICT.",
        **resource_tables(args.python),
        "refused_attributes": attribute_tables(args.python),
        "side_effect_calls": side_effect_table(args.python),
        "methods": methods,
        "builtin_calls": kwargs,
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
