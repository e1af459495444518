"""What a module passes to compiled code defined in other modules: argument facts per call.

A sub-cell's `construct` or a helper gets its parameters' values from its callers. Callers
in the same file are read by the flow analysis (flow.py `_call_sites`); callers in other
modules are not in the file's tree. So each module's summary carries, for every call it
makes into a cell or function it imports, what is known of each argument (`outgoing`):

- `self.<attr>(...)` where `__init__` (or a method it calls) binds `self.<attr>` to an
  instance of an imported class, `self.<attr>[i](...)` and `for c in self.<attr>: c(...)`
  where `self.<attr>` is a `CellList` / `SequentialCell` of one imported class, and
  `name(...)` where `name` is bound to such an instance: a call of that class's `construct`;
- `f(...)` where `f` is imported: a call of `f` (not `Block(...)`: a capitalised name
  builds a cell; and not in the methods that build the sub-cells, `__init__` and the
  methods it calls).

A fact is a `Kind` (constant, unknown, tensor) with an abstract value (abstract.py) for
its type: literals and tuples of them, shape queries (`x.shape[2]`, `len(...)`), tensors
built by `Tensor(...)` / `mindspore.ops`, tensor methods, the parameters of a `construct`
(graph inputs), and local names bound to those. Anything else is unknown, and one unknown
caller leaves the parameter as it was without cross-module facts (flow.py `_incoming_*`).

The facts flow into the callee's check from the modules that import it: `attach` puts them
on the project's graph scopes, and `incoming_digest` is what a callee file's cache key
adds, so that editing a caller checks the callee again.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import sys
from collections.abc import Iterable, Mapping
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING, Any

from npu_lsp.astutil import STATEMENT_BLOCKS, branch_list, self_attr
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.result_kinds import CONST_PRIMITIVES as _SHAPE_PRIMITIVES
from npu_lsp.rules.graphmode.result_kinds import HOST_METHODS as _HOST_METHODS
from npu_lsp.rules.graphmode.result_kinds import STATIC_ATTRS as _STATIC_ATTRS

if TYPE_CHECKING:
    from npu_lsp.scope import GraphScope, ModuleInfo

# Kinds as flow.Kind numbers them (flow imports this module's readers, not the reverse).
CONST, UNKNOWN, TENSOR = 0, 1, 3
Fact = tuple[int, av.Value]
#: A fact as summaries keep it (plain data: pickles and digests the same in every process):
#: (kind, type class as flow.py names it, (the Python constant,) or ())
Passed = tuple[int, str, tuple[object, ...]]
#: (target qualname, calling module, positional arguments, keyword arguments)
XCall = tuple[str, str, tuple[Passed, ...], tuple[tuple[str, Passed], ...]]

_UNKNOWN: Fact = (UNKNOWN, av.UNKNOWN)
_CONST_BUILTINS = frozenset({"len", "isinstance", "type", "hasattr"})
_DEPTH = 8
#: top-level packages whose names are never the project's own cells or functions
_OUTSIDE = frozenset(sys.stdlib_module_names) | {"mindspore", "numpy", "torch", "scipy", "builtins"}


def outgoing(tree: ast.Module, info: ModuleInfo, text: str | None = None) -> tuple[XCall, ...]:
    """Every call `tree` makes into an imported cell or function, with its argument facts.
    With the file's `text`, definitions whose text names nothing that can call out are not
    walked (most of a file: the walk is the cost)."""
    imports = {n: q for n, q in info.imports.items() if q.partition(".")[0] not in _OUTSIDE}
    if not imports:
        return ()  # nothing of the project is imported: no call can reach another module
    out: list[XCall] = []
    module_instances = _instances(tree.body, imports)
    lines = _Lines(text) if text is not None else None
    names = frozenset([*imports, *module_instances])

    def mentions(node: Any, words: frozenset[str]) -> bool:
        return lines is None or lines.mentions(node, words)

    for st in tree.body:
        if isinstance(st, ast.ClassDef):
            if not mentions(st, names):
                continue  # no imported name: no sub-cell of another module, no call out
            methods = [m for m in st.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            held, listed, builders = _held(methods, imports)
            words = names | held.keys() | listed.keys()
            for m in methods:
                # building methods build cells (`Block(...)`), they do not run them
                if m.name not in builders:
                    _scan(m, imports, held, listed, module_instances, info.module, out, lines, words)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _scan(st, imports, {}, {}, module_instances, info.module, out, lines, names)
    # plain-Python module-level code: `net = Net(); net(x, 3)`
    env: _Env | None = None
    for st in tree.body:
        if not isinstance(st, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in branch_list(st):
                if type(node) is ast.Call:
                    target = _target(node, imports, {}, {}, module_instances, {})
                    if target is not None:
                        env = env or _Env(None, _statements(tree.body), info.module)
                        _record(node, target, env, info.module, out, imports)
    return tuple(out)


def _instances(body: list[ast.stmt], imports: Mapping[str, str]) -> dict[str, str]:
    """`name = Imported(...)` statements of `body` (not nested) -> the class's qualname."""
    out: dict[str, str] = {}
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            q = _imported(st.value.func, imports)
            for t in st.targets:
                if isinstance(t, ast.Name):
                    if q is not None:
                        out[t.id] = q
                    else:
                        out.pop(t.id, None)
    return out


def _imported(f: ast.expr, imports: Mapping[str, str]) -> str | None:
    """Qualname of an imported name or `module.name` (not the standard library's)."""
    if isinstance(f, ast.Name):
        q = imports.get(f.id)
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in imports:
        q = f"{imports[f.value.id]}.{f.attr}"
    else:
        return None
    return q


def _held(
    methods: list[Any], imports: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """`self.<attr>` -> imported class bound to it by `__init__` (or methods it calls),
    `self.<attr>` -> the one imported class of a cell list built there, and the names of
    those building methods."""
    by_name = {m.name: m for m in methods}
    # statements only (assignments, `x.append(...)`, `self.build()`): no expression walk
    stmts: dict[str, list[ast.stmt]] = {}
    todo = ["__init__"] if "__init__" in by_name else []
    while todo:
        name = todo.pop()
        if name in stmts or name == "construct":
            continue
        stmts[name] = _statements(by_name[name].body)
        for st in stmts[name]:
            if type(st) is ast.Expr and type(st.value) is ast.Call and self_attr(st.value.func) in by_name:
                todo.append(self_attr(st.value.func) or "")
    held: dict[str, str] = {}
    listed: dict[str, set[str]] = {}
    grown: dict[str, set[str]] = {}  # local list name / self attr -> classes appended
    lists: dict[str, ast.expr] = {}  # self.<attr> = nn.CellList(<expr>)
    for body in stmts.values():
        for st in body:
            node: Any = st.value if type(st) is ast.Expr else st
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                f = node.value.func
                last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                q = _imported(f, imports)
                for t in node.targets:
                    attr = self_attr(t)
                    if attr is None:
                        continue
                    if last in ("CellList", "SequentialCell"):
                        lists[attr] = node.value.args[0] if node.value.args else ast.List(elts=[])
                    elif q is not None:
                        held[attr] = q
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "append"
                and len(node.args) == 1
            ):
                recv = node.func.value
                key = recv.id if isinstance(recv, ast.Name) else self_attr(recv)
                arg = node.args[0]
                q = _imported(arg.func, imports) if isinstance(arg, ast.Call) else None
                if key is not None:
                    grown.setdefault(key, set()).add(q or "?")
    for attr, e in lists.items():
        if isinstance(e, ast.ListComp) and isinstance(e.elt, ast.Call):
            classes = {_imported(e.elt.func, imports) or "?"}
        elif isinstance(e, (ast.List, ast.Tuple)) and e.elts:
            classes = {(_imported(x.func, imports) if isinstance(x, ast.Call) else None) or "?" for x in e.elts}
        elif isinstance(e, (ast.List, ast.Tuple)):
            classes = grown.get(attr, {"?"})
        elif isinstance(e, ast.Name):
            classes = grown.get(e.id, {"?"})
        else:
            classes = {"?"}
        listed[attr] = classes
    one = {a: next(iter(c)) for a, c in listed.items() if len(c) == 1 and "?" not in c}
    return held, one, set(stmts)



def _scan(
    func: Any,
    imports: Mapping[str, str],
    held: Mapping[str, str],
    listed: Mapping[str, str],
    module_instances: Mapping[str, str],
    module: str,
    out: list[XCall],
    lines: _Lines | None,
    words: frozenset[str],
) -> None:
    """The calls out of `func`. Its statements are listed (cheap); only those whose lines
    name something that can call out (an imported name, a held sub-cell, a loop variable
    over a cell list) are walked for calls."""
    if lines is not None and not lines.present(func, words):
        return  # names nothing that can call out (a loop variable needs its cell list)
    body = _statements(func.body)
    local = {**module_instances, **_instances(body, imports)}
    loop_vars: dict[str, str] = {}  # for c in self.<cell list>: c -> its class
    for st in body:
        if (
            type(st) is ast.For
            and isinstance(st.target, ast.Name)
            and (attr := self_attr(cells_iterated(st.iter))) is not None
            and attr in listed
        ):
            loop_vars[st.target.id] = listed[attr]
    found: list[str] = []
    if lines is not None:
        found = lines.present(func, words | local.keys() | loop_vars.keys())
    calls: list[ast.Call] = []
    for st in body:
        t = type(st)
        if t in _DEFINITIONS:
            continue
        if t is ast.With or t is ast.AsyncWith:
            parts: list[Any] = [i.context_expr for i in st.items]  # type: ignore[attr-defined]
        else:
            parts = [getattr(st, f, None) for f in _HEADERS[t]] if t in _HEADERS else [st]
        for part in parts:
            if part is None:
                continue
            for item in part if isinstance(part, list) else [part]:
                if lines is not None and not lines.mentions(item, found):
                    continue
                calls.extend(n for n in branch_list(item) if type(n) is ast.Call)
    env: _Env | None = None
    for call in calls:
        target = _target(call, imports, held, listed, local, loop_vars)
        if target is not None:
            env = env or _Env(func, body, module)  # the function's names, once it calls out
            _record(call, target, env, module, out, imports)


class _Lines:
    """The file's text by line, to tell cheaply whether a node's lines hold a word (a
    substring test: a word inside a longer name only costs a walk)."""

    def __init__(self, text: str) -> None:
        self.text = text
        # offsets of line starts ("\n" ends a line, so does "\r\n"; a lone "\r", which
        # `ast` counts too, is not split here: a later line's words then read as absent and
        # its calls are left out, which keeps the callee as it was)
        self.starts = list(accumulate(map(add, map(len, text.split("\n")), repeat(1)), initial=0))

    def segment(self, node: Any) -> str:
        starts = self.starts
        first = starts[min(node.lineno, len(starts)) - 1]
        end = node.end_lineno or node.lineno
        return self.text[first : starts[end] if end < len(starts) else len(self.text)]

    def mentions(self, node: Any, words: Iterable[str]) -> bool:
        seg = self.segment(node)
        return any(w in seg for w in words)

    def present(self, node: Any, words: Iterable[str]) -> list[str]:
        """Which of `words` the node's lines hold (to test its parts against only those)."""
        seg = self.segment(node)
        return [w for w in words if w in seg]


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: compound statements: the expressions of their header (their blocks are statements too)
_HEADERS: dict[type, tuple[str, ...]] = {
    ast.If: ("test",),
    ast.While: ("test",),
    ast.For: ("iter",),
    ast.AsyncFor: ("iter",),
    ast.Try: (),
    ast.Match: ("subject",),
    # a `case` has no position of its own; its body is listed apart, patterns hold no calls
    ast.match_case: ("guard",),
}


def cells_iterated(it: ast.expr) -> ast.expr:
    """The cell list a `for` loop walks: `self.layers` for `self.layers.cell_list` (a
    SequentialCell's list of its cells, which graph mode iterates like the cell itself:
    mindediting's SwinIR; probes written/zoo `zoo31_swinir_*`), else `it`."""
    if type(it) is ast.Attribute and it.attr == "cell_list" and type(it.value) is ast.Attribute:
        return it.value
    return it


def _target(
    call: ast.Call,
    imports: Mapping[str, str],
    held: Mapping[str, str],
    listed: Mapping[str, str],
    local: Mapping[str, str],
    loop_vars: Mapping[str, str],
) -> str | None:
    f = call.func
    attr = self_attr(f)
    if attr is not None:
        return f"{held[attr]}.construct" if attr in held else None
    if isinstance(f, ast.Subscript) and (attr := self_attr(f.value)) is not None:
        return f"{listed[attr]}.construct" if attr in listed else None
    if isinstance(f, ast.Name):
        if f.id in loop_vars:
            return f"{loop_vars[f.id]}.construct"
        if f.id in local:
            return f"{local[f.id]}.construct"
    return _imported(f, imports)


def _record(
    call: ast.Call, target: str | None, env: _Env, module: str, out: list[XCall], imports: Mapping[str, str]
) -> None:
    if target is None or any(isinstance(a, ast.Starred) for a in call.args):
        return
    if target.rpartition(".")[2][:1].isupper():
        return  # `Block(...)` builds a cell (by the naming convention): nothing it passes is compiled
    if any(k.arg is None for k in call.keywords):
        return  # `**kwargs`: which parameters it fills is not known
    args = tuple(_argument(a, env, imports) for a in call.args)
    kws = tuple((k.arg, _argument(k.value, env, imports)) for k in call.keywords if k.arg is not None)
    out.append((target, module, args, kws))


#: the type class of a `_reference`: an argument that is a name imported from the project
REF = "ref:"


def _argument(a: ast.expr, env: _Env, imports: Mapping[str, str]) -> Passed:
    """The fact of one argument; a bare name imported from the project (`from .grad_clip
    import GRADIENT_CLIP_TYPE`) and not rebound here is passed as a reference to it (unknown
    until `resolve` follows it to a module-level constant: `reference`). So is a name this
    function neither binds nor imports (a constant of the calling module itself, or one it
    star-imports) and `mod.NAME` of an imported module `mod`."""
    ref = _reference_to(a, env, imports)
    if ref is not None:
        return UNKNOWN, REF + ref, ()
    return _passed(env.fact(a, 0))


def _reference_to(a: ast.expr, env: _Env, imports: Mapping[str, str]) -> str | None:
    """The qualname a bare name or `module.NAME` argument reads at module level, else None."""
    if type(a) is ast.Name:
        if a.id in env.params or a.id in env.bindings:
            return None
        return imports.get(a.id) or f"{env.module}.{a.id}"
    if (
        type(a) is ast.Attribute
        and type(a.value) is ast.Name
        and a.value.id in imports
        and a.value.id not in env.params
        and a.value.id not in env.bindings
        and a.attr not in _STATIC_ATTRS
    ):
        return f"{imports[a.value.id]}.{a.attr}"
    return None


def reference(p: Passed) -> tuple[str, str] | None:
    """(module, name) of an argument passed as a reference to an imported name, else None."""
    if p[0] != UNKNOWN or not p[1].startswith(REF):
        return None
    module, _, name = p[1][len(REF) :].rpartition(".")
    return module, name


def _passed(f: Fact) -> Passed:
    kind, v = f
    return kind, type_class(v), (_python(v),) if kind == CONST and _is_const(v) else ()


def _is_const(v: av.Value) -> bool:
    if isinstance(v, av.Sequence):
        return v.elements is not None and all(_is_const(x) for x in v.elements)
    return av.is_constant(v)


def _python(v: av.Value) -> object:
    if isinstance(v, (av.Scalar, av.Str)):
        return v.value
    if isinstance(v, av.Sequence):
        return tuple(_python(x) for x in v.elements or ())
    return None


def literal(e: ast.expr | None) -> Passed | None:
    """The fact of a literal constant (int, float, str, bool, None, tuples of them), else None."""
    if e is None or not _literal(e):
        return None
    v = av.constant(ast.literal_eval(e))
    return (CONST, type_class(v), (_python(v),)) if v.known and _is_const(v) else None


def _literal(e: ast.expr) -> bool:
    if type(e) is ast.Constant:
        return e.value is None or isinstance(e.value, (int, float, str, bool))
    if type(e) is ast.UnaryOp and isinstance(e.op, (ast.USub, ast.UAdd)):
        return type(e.operand) is ast.Constant and isinstance(e.operand.value, (int, float))
    return type(e) is ast.Tuple and all(_literal(x) for x in e.elts)


def value(p: Passed) -> av.Value:
    """The abstract value of a passed argument."""
    if p[2]:
        v = av.constant(p[2][0])
        return av.Sequence("list", v.elements) if p[1] == "list" and isinstance(v, av.Sequence) else v
    return {"tensor": av.Tensor(), "tuple": av.Sequence("tuple"), "list": av.Sequence("list"),
            "scalar": av.Scalar(""), "str": av.Str(), "none": av.NONE, "dict": av.Dict()}.get(p[1], av.UNKNOWN)


class _Env:
    """The names of one function (or module-level code): its parameters and bindings."""

    def __init__(self, func: Any, body: list[ast.stmt], module: str = "") -> None:
        self.module = module
        self.params: dict[str, bool] = {}  # name -> has a default
        self.construct = False
        #: a method whose first parameter is `self` (so `self.training` is its cell's flag)
        self.method = False
        if func is not None:
            a = func.args
            positional = [*a.posonlyargs, *a.args]
            self.method = bool(positional) and positional[0].arg == "self"
            first_default = len(positional) - len(a.defaults)
            for i, p in enumerate(positional):
                self.params[p.arg] = i >= first_default
            for p in (*a.kwonlyargs, a.vararg, a.kwarg):
                if p is not None:
                    self.params[p.arg] = True
            self.construct = func.name == "construct"
        self.bindings: dict[str, list[ast.expr | None]] = {}
        for node in body:  # already flattened by `_statements`
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                self._bind(node.target, None)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                targets = [node.target] if isinstance(node, (ast.For, ast.AsyncFor)) else [
                    i.optional_vars for i in node.items if i.optional_vars is not None
                ]
                for t in targets:
                    self._bind(t, None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bindings.setdefault(node.name, []).append(None)
        self.memo: dict[str, Fact] = {}

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = (
                isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == len(target.elts)
                and not any(isinstance(x, ast.Starred) for x in target.elts)
            )
            for i, t in enumerate(target.elts):
                self._bind(t.value if isinstance(t, ast.Starred) else t, value.elts[i] if pairs else None)  # type: ignore[union-attr]
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None)

    def fact(self, e: ast.expr, depth: int) -> Fact:
        if depth > _DEPTH:
            return _UNKNOWN
        d = depth + 1
        if isinstance(e, ast.Constant):
            v = av.constant(e.value)
            return (CONST, v) if v.known else _UNKNOWN
        if isinstance(e, (ast.Tuple, ast.List)):
            if any(isinstance(x, ast.Starred) for x in e.elts):
                return _UNKNOWN
            elts = [self.fact(x, d) for x in e.elts]
            kind = max((k for k, _ in elts), default=CONST)
            seq = av.Sequence("tuple" if isinstance(e, ast.Tuple) else "list", tuple(v for _, v in elts))
            if kind == TENSOR and any(k == TENSOR and not self._constant_tensor(x) for x, (k, _) in zip(e.elts, elts, strict=True)):
                # a display holding a tensor has a tensor's kind, as flow.py's `_kind_elts`
                # says of one built in the callee's own module (`pick((x, x * 2))`; measured,
                # written/crossmod probes `fix33c_seq_*_pick`: LAX's "The pointer[data_abs] is
                # null"); one of tensors built from constants only stays unknown (probe
                # `fix33c_seq_const_tuple_pick` compiles: MindSpore folds them)
                return TENSOR, seq
            return (CONST if kind == CONST else UNKNOWN), seq
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            k, v = self.fact(e.operand, d)
            if isinstance(v, av.Scalar) and v.constant and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                return CONST, av.constant(-v.value if isinstance(e.op, ast.USub) else v.value)
            return (k, av.Tensor()) if k == TENSOR else (k, av.Scalar("")) if k == CONST else _UNKNOWN
        if isinstance(e, ast.BinOp):
            lk, lv = self.fact(e.left, d)
            rk, rv = self.fact(e.right, d)
            if TENSOR in (lk, rk) and isinstance(lv if lk == TENSOR else rv, av.Tensor):
                return TENSOR, av.Tensor()
            if lk == rk == CONST and isinstance(lv, av.Scalar) and isinstance(rv, av.Scalar):
                return CONST, av.Scalar("")
            return _UNKNOWN
        if isinstance(e, ast.Attribute):
            if e.attr == "training" and self.method and isinstance(e.value, ast.Name) and e.value.id == "self":
                # `self.training`, the Cell's mode flag: a Python bool the graph folds
                # (`set_train()` decides which), never a tensor (opensora's `self.y_embedder(y,
                # self.training)` into `if (train and use_dropout) or ...`; probes zoo31_training_*)
                return CONST, av.Scalar("bool")
            if e.attr in _STATIC_ATTRS and not self_attr(e):
                return CONST, (av.Sequence("tuple") if e.attr in ("shape", "strides") else av.Scalar("int") if e.attr != "dtype" else av.DType())
            return _UNKNOWN
        if isinstance(e, ast.Subscript):
            if isinstance(e.value, ast.Attribute) and e.value.attr == "shape" and not self_attr(e.value):
                return CONST, (av.Scalar("int") if not isinstance(e.slice, ast.Slice) else av.Sequence("tuple"))
            return _UNKNOWN
        if isinstance(e, ast.Call):
            return self._call(e, d)
        if isinstance(e, ast.Name):
            return self._name(e.id, d)
        return _UNKNOWN

    def _constant_tensor(self, e: ast.expr) -> bool:
        """`Tensor(np.ones(2), ms.float32)`: a tensor made by a call naming none of this
        function's parameters or local names (a constant MindSpore folds)."""
        return isinstance(e, ast.Call) and not any(
            isinstance(n, ast.Name) and (n.id in self.params or n.id in self.bindings) for n in ast.walk(e)
        )

    def _call(self, e: ast.Call, d: int) -> Fact:
        f = e.func
        if isinstance(f, ast.Name):
            if f.id in _CONST_BUILTINS and f.id not in self.bindings and f.id not in self.params:
                return CONST, av.Scalar("int") if f.id == "len" else av.Scalar("bool")
            if f.id in ("Tensor", "Parameter") and f.id not in self.bindings:
                return TENSOR, av.Tensor()
            return _UNKNOWN
        if isinstance(f, ast.Call) and isinstance(f.func, ast.Attribute) and f.func.attr in _SHAPE_PRIMITIVES:
            return CONST, av.Sequence("tuple") if f.func.attr == "Shape" else av.Scalar("int")  # P.Shape()(x)
        if isinstance(f, ast.Attribute):
            root = f.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in ("ms", "mindspore", "ops", "P", "F") and root.id not in self.bindings:
                if f.attr in ("Tensor", "Parameter") or (f.attr[:1].islower() and f.attr not in ("shape", "rank", "dtype", "size")):
                    return TENSOR, av.Tensor()
                if f.attr == "shape":
                    return CONST, av.Sequence("tuple")
                return _UNKNOWN
            if f.attr in _HOST_METHODS or f.attr.startswith("_"):
                return _UNKNOWN
            k, _ = self.fact(f.value, d)
            if k == TENSOR:
                return TENSOR, av.Tensor()  # x.sum(), x.reshape(...): a tensor method
        return _UNKNOWN

    def _name(self, name: str, d: int) -> Fact:
        hit = self.memo.get(name)
        if hit is not None:
            return hit
        self.memo[name] = _UNKNOWN  # a name read while being evaluated: unknown
        values = self.bindings.get(name)
        facts: list[Fact] = []
        if name in self.params:
            if self.construct and not self.params[name] and name != "self":
                facts.append((TENSOR, av.Tensor()))  # a graph input: a tensor unless shown otherwise
            else:
                facts.append(_UNKNOWN)
        for v in values or ():
            facts.append(self.fact(v, d) if v is not None else _UNKNOWN)
        out = _join(facts) if facts else _UNKNOWN
        self.memo[name] = out
        return out


def _join(facts: list[Fact]) -> Fact:
    kinds = {k for k, _ in facts}
    if len(kinds) != 1 or UNKNOWN in kinds:
        return _UNKNOWN
    first = facts[0]
    if all(f == first for f in facts):
        return first
    kind = kinds.pop()
    return (TENSOR, av.Tensor()) if kind == TENSOR else (CONST, av.UNKNOWN)


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of `body` and of its blocks, in order, not of nested functions or classes
    (`except` clauses and `case`s are listed too)."""
    out: list[Any] = []
    stack: list[Any] = list(reversed(body))
    while stack:
        st = stack.pop()
        out.append(st)
        fields = STATEMENT_BLOCKS.get(type(st))
        if fields is not None:
            for name in reversed(fields):
                stack.extend(reversed(getattr(st, name)))
    return out


# ------------------------------------------------------------ constants passed by name
#: What a module offers to a name read from it (plain data, as `Passed`): its module-level
#: constants, the project names it imports (local name -> qualname), the modules it
#: star-imports
Exports = tuple[tuple[tuple[str, Passed], ...], tuple[tuple[str, str], ...], tuple[str, ...]]
#: how many modules a reference is followed through (`a` imports from `b`, which imported it
#: from `c`...); a longer chain stays unknown
_REEXPORT_DEPTH = 8


def exports(tree: ast.Module, info: ModuleInfo, text: str | None = None) -> Exports:
    """The module's `Exports`. A constant is a name bound once at module level, by a plain
    assignment of a literal (`REPEATS = 3`, `WIDTH = (2, 3)`, `MODE = "sum"`), and never
    rebound (a second binding, `+=`, a loop target, an import or definition of the name, a
    `global` statement naming it): MindSpore reads its Python value while compiling."""
    found: dict[str, Passed | None] = {}
    others: list[ast.stmt] = []
    for st in tree.body:
        t = type(st)
        if t is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            found[st.targets[0].id] = _module_value(st.value, found)  # type: ignore[attr-defined]
        elif t is ast.AnnAssign and type(st.target) is ast.Name and st.value is not None:  # type: ignore[attr-defined]
            found[st.target.id] = _module_value(st.value, found)  # type: ignore[attr-defined]
        elif t is not ast.Expr:
            others.append(st)
    if not any(found.values()):
        found = {}  # no constant: nothing to rule out (most modules)
    for st in others if found else ():
        for n in _bound_at_module_level(st):
            found[n] = None
    if text is not None and "global" in text and any(found.values()):
        for node in ast.walk(tree):
            if type(node) is ast.Global:
                for n in node.names:
                    found[n] = None
    imports = tuple((n, q) for n, q in info.imports.items() if q.partition(".")[0] not in _OUTSIDE)
    constants = tuple((n, p) for n, p in found.items() if p is not None)
    return constants, imports, tuple(getattr(info, "star_imports", ()))


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Mod: operator.mod}


def _module_value(e: ast.expr, found: Mapping[str, Passed | None]) -> Passed | None:
    """The constant a module-level assignment binds, evaluated in statement order as Python
    runs the module (`N = 3` then `N = N + 1`, `K = 2 * N`): a literal, or numbers combined
    by `+ - * / // %` from literals and the constants bound so far; else None."""
    found_literal = literal(e)
    if found_literal is not None:
        return found_literal
    number = _number(e, found, 0)
    return None if number is None else literal(ast.Constant(number))


def _number(e: ast.expr, found: Mapping[str, Passed | None], depth: int) -> int | float | None:
    if depth > _DEPTH:
        return None
    v: object
    if type(e) is ast.Constant:
        v = e.value
    elif type(e) is ast.Name:
        p = found.get(e.id)
        v = p[2][0] if p is not None and p[2] else None
    elif type(e) is ast.UnaryOp and type(e.op) is ast.USub:
        inner = _number(e.operand, found, depth + 1)
        return None if inner is None else -inner
    elif type(e) is ast.BinOp and type(e.op) in _ARITHMETIC:
        left, right = _number(e.left, found, depth + 1), _number(e.right, found, depth + 1)
        if left is None or right is None or (right == 0 and type(e.op) in (ast.Div, ast.FloorDiv, ast.Mod)):
            return None
        v = _ARITHMETIC[type(e.op)](left, right)
    else:
        return None
    # bounded: `X = X * X` repeated must not grow a huge int while summarising
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < 1 << 62 else None


def _bound_at_module_level(st: ast.stmt) -> Iterable[str]:
    """Names a module-level statement other than a plain assignment may bind."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [st.name]
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).partition(".")[0] for a in st.names]
    return [n.id for n in ast.walk(st) if type(n) is ast.Name and type(n.ctx) is not ast.Load]


def resolve(calls: Iterable[XCall], modules: Mapping[str, Exports]) -> list[XCall]:
    """`calls` with each argument passed as a reference to a name (`REF`) replaced by the
    literal it names, when the name is a module-level constant of its module or, followed
    through the names that module imports or star-imports (`config.py` re-exporting
    `consts.py`), of another module of the project; a reference that reaches no constant
    (within `_REEXPORT_DEPTH` modules, each (module, name) once: star imports may cycle)
    stays as it is."""
    out: list[XCall] = []
    memo: dict[str, Passed | None] = {}
    for c in calls:
        if not any(p[1].startswith(REF) for p in c[2]) and not any(p[1].startswith(REF) for _, p in c[3]):
            out.append(c)
            continue
        args = tuple(_resolved(p, modules, memo) for p in c[2])
        kws = tuple((k, _resolved(p, modules, memo)) for k, p in c[3])
        out.append((c[0], c[1], args, kws))
    return out


def _resolved(p: Passed, modules: Mapping[str, Exports], memo: dict[str, Passed | None]) -> Passed:
    if p[0] != UNKNOWN or not p[1].startswith(REF):
        return p
    target = p[1][len(REF) :]
    if target not in memo:
        module, _, name = target.rpartition(".")
        memo[target] = _constant(module, name, modules, 0, set())
    return memo[target] or p


def _constant(
    module: str, name: str, modules: Mapping[str, Exports], depth: int, seen: set[tuple[str, str]]
) -> Passed | None:
    """The literal `module.name` is bound to, following imports (see `resolve`)."""
    if depth > _REEXPORT_DEPTH or (module, name) in seen:
        return None
    seen.add((module, name))
    ex = modules.get(module)
    if not ex:
        return None
    constants, imports, stars = ex
    for n, p in constants:
        if n == name:
            return p
    for n, q in imports:
        if n == name:
            m, _, real = q.rpartition(".")
            return _constant(m, real, modules, depth + 1, seen) if m else None
    for base in stars:
        found = _constant(base, name, modules, depth + 1, seen)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------- the callee side
def attach(scopes: Mapping[str, GraphScope], calls: Iterable[XCall]) -> None:
    """Put each call on the graph scope of the function it calls (`GraphScope.incoming`)."""
    by_target: dict[str, list[XCall]] = {}
    for c in calls:
        if c[0] in scopes:
            by_target.setdefault(c[0], []).append(c)
    for q, s in scopes.items():
        s.incoming = tuple(by_target.get(q, ()))


def incoming_digests(modules: Iterable[str], calls: Iterable[XCall]) -> dict[str, str]:
    """Per module, a digest of what other modules' calls pass to its functions (sorted: the
    digest of a set), for its cache key; modules nobody calls are left out."""
    known = set(modules)
    into: dict[str, list[str]] = {}
    for c in calls:
        parts = c[0].split(".")
        for k in range(len(parts) - 1, 0, -1):
            m = ".".join(parts[:k])
            if m in known:
                if m != c[1]:
                    into.setdefault(m, []).append(repr(c))
                break
    return {
        m: hashlib.blake2b("\n".join(sorted(rs)).encode(), digest_size=16).hexdigest()
        for m, rs in into.items()
    }


def param_fact(call: XCall, index: int, name: str) -> Passed | None:
    """The fact `call` gives the parameter `name` (positional `index`, -1 for keyword-only);
    None when the call leaves it to its default."""
    if 0 <= index < len(call[2]):
        return call[2][index]
    for k, f in call[3]:
        if k == name:
            return f
    return None


def type_class(v: av.Value) -> str:
    """flow.py's type class of a fact's value ("?" when not known)."""
    if isinstance(v, av.Tensor):
        return "tensor"
    if isinstance(v, av.Sequence):
        return v.kind
    if isinstance(v, av.Scalar):
        return "scalar"
    if isinstance(v, av.Str):
        return "str"
    if isinstance(v, av.NoneValue):
        return "none"
    if isinstance(v, av.Dict):
        return "dict"
    return "?"
