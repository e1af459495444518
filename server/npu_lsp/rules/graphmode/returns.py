"""Return kinds of a module's functions, as summaries carry them to the modules importing them.

flow.py gives a call of the file's own helper the kind its `return`s take with the call's
argument kinds (`Analyzer._return_kind`). A helper of another module is not in the file's
tree, and summaries keep no expressions, so each module's summary states, per module-level
function, its return kind as a small *formula* over its parameters' kinds (`summarise`),
which the caller's flow evaluates with its own argument kinds (flow.py
`_imported_return_kind`): `def size(x, d): return x.shape[d]` is `max(CONST, kind(d))`,
an int while compiling when `d` is one, whatever `x` is.

The formula mirrors flow's kind algebra (flow.py `Analyzer._kind`), flow-insensitively over
the function's local names. Nodes are plain tuples (they pickle and digest the same in every
process, and compare equal when the source does):

- `(CONST_, k)`: the kind `k` (flow.Kind's number);
- `(PARAM, i)`: the kind of parameter `i`;
- `(MAX, f, g, ...)`: the most dynamic of `f, g, ...`;
- `(SCALAR, f)`: `int(f)` and friends: a constant of a constant, else unknown;
- `(NUMPY, f)`: a numpy call: run-time value (VAR) of a dynamic `f`, else a constant;
- `(HOST, f)`: `f.item()` and friends: VAR of a dynamic `f`, else `f`'s kind;
- `(EXTRA_POS,)`, `(EXTRA_KW,)`: the most dynamic of what the function's `*args` /
  `**kwargs` receive;
- `(CALL, qualname, (f, ...), ((keyword, f), ...), splice)`: what the project's function
  `qualname` returns for those argument kinds (resolved by the caller, which has the
  index); `splice` bit 1 / 2: the call forwards the function's own `*args` / `**kwargs`
  (`return tensor_size(obj, *args, **kwargs)`).

A decorated function returns what its decorator's wrapper does, usually what the body
returns: its formula is the body's joined with unknown (a tensor stays a tensor, a shape
item becomes unknown). A generator or an `async` function gets no entry, nor does a name
bound twice at module level; callers take their results as unknown.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from npu_lsp.astutil import (
    COMPREHENSION_TYPES,
    DEFINITIONS_AND_IMPORTS,
    STATEMENT_BLOCKS,
    module_bindings,
)
from npu_lsp.rules.graphmode.result_kinds import CONST_FUNCTIONS as _SHAPE_FUNCS
from npu_lsp.rules.graphmode.result_kinds import CONST_METHODS as _CONST_METHODS
from npu_lsp.rules.graphmode.result_kinds import CONST_PRIMITIVES as _CONST_PRIMITIVES
from npu_lsp.rules.graphmode.result_kinds import HOST_METHODS as _HOST_METHODS
from npu_lsp.rules.graphmode.result_kinds import STATIC_ATTRS as _STATIC_ATTRS

if TYPE_CHECKING:
    from npu_lsp.scope import ModuleInfo

# Kinds as flow.Kind numbers them (flow imports this module, not the reverse).
K_CONST, K_UNKNOWN, K_VAR, K_TENSOR = 0, 1, 2, 3
CONST_, PARAM, MAX, SCALAR, NUMPY, HOST, CALL, EXTRA_POS, EXTRA_KW = range(9)
#: `Entry` and `CALL` bits: `*args`, `**kwargs`
STAR_ARGS, STAR_KWARGS = 1, 2

Formula = tuple[Any, ...]
#: (parameter names, positional ones first; how many are positional; per parameter the
#: formula of its default or None; the formula of what the function returns; STAR_ARGS |
#: STAR_KWARGS when it takes `*args` / `**kwargs`)
Entry = tuple[tuple[str, ...], int, tuple[Formula | None, ...], Formula, int]

_UNKNOWN_F: Formula = (CONST_, K_UNKNOWN)
_CONST_F: Formula = (CONST_, K_CONST)
_TENSOR_F: Formula = (CONST_, K_TENSOR)
_CONST_BUILTINS = frozenset(
    {"len", "isinstance", "issubclass", "type", "hasattr", "callable", "id", "dir", "vars"}
)
_SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex", "str"})
#: nodes past which a formula is given up (unknown): bounds the summary and its evaluation
_MAX_NODES = 200
#: local names solved (memo misses) past which a function's formula is given up (unknown).
#: Names bound from each other form cycles, and a name read inside an unfinished cycle is
#: solved again at each read: PGNet's `deteval.combine_results` (mindspore-lab/models), seven
#: names each rebound by unpacking three calls that take all seven, ran for minutes. Of
#: 2,493 functions (the checker's own, mindrl, PGNet, marigold) the others solve at most
#: 7,314 (marigold `multi_res_noise_like`), most under 100.
_MAX_STEPS = 10_000


class _GiveUp(Exception):
    """A formula costs more than `_MAX_STEPS` names solved."""


def summarise(tree: ast.Module, info: ModuleInfo, text: str | None = None) -> dict[str, Entry]:
    """Function name -> its return formula, for the module-level functions of `tree` that
    have one (see the module docstring), in source order. With the module's `text`, and
    when it holds no `yield`, `await` or `:=` (most modules), only statements are visited:
    no expression can then make a generator or bind a name."""
    out: dict[str, Entry] = {}
    functions = [st for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return out
    walrus = text is None or ":=" in text
    bindings = module_bindings(tree.body, walrus)
    globals_ = _module_values(bindings)
    exprs = walrus or "yield" in text or "await" in text  # type: ignore[operator]
    for st in functions:
        if len(bindings[st.name]) > 1:
            # defined twice, or rebound at module level (an assignment, an import, a class,
            # under an `if` too): which object a caller gets by the name is not known
            continue
        entry = _entry(st, info, globals_, exprs) if isinstance(st, ast.FunctionDef) else None
        if entry is not None:
            out[st.name] = entry
    return out


def _module_values(bindings: dict[str, list[ast.AST]]) -> dict[str, bool]:
    """Module-level names bound to a value (not only by definitions and imports, which bind
    compile-time objects) -> is every binding an assignment of a literal constant?"""
    out: dict[str, bool] = {}
    for name, binds in bindings.items():
        if all(type(b) in DEFINITIONS_AND_IMPORTS for b in binds):
            continue
        out[name] = all(isinstance(b, ast.Assign) and type(b.value) is ast.Constant for b in binds)
    return out


def _entry(
    func: ast.FunctionDef, info: ModuleInfo, globals_: dict[str, bool], exprs: bool = True
) -> Entry | None:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    names = tuple(a.arg for a in [*positional, *args.kwonlyargs])
    defaults: list[Formula | None] = [None] * (len(positional) - len(args.defaults))
    module_level = _Body(None, (), info, globals_)
    defaults.extend(module_level.formula(d) for d in args.defaults)
    defaults.extend(None if d is None else module_level.formula(d) for d in args.kw_defaults)
    stars = (STAR_ARGS if args.vararg else 0) | (STAR_KWARGS if args.kwarg else 0)
    body = _Body(func, names, info, globals_, args.vararg, args.kwarg, exprs)
    if body.generator:
        return None
    try:
        returned = body.returned()
    except _GiveUp:
        returned = _UNKNOWN_F
    if func.decorator_list:
        returned = _max([returned, _UNKNOWN_F])
    if _size(returned) > _MAX_NODES:
        returned = _UNKNOWN_F
    return names, len(positional), tuple(defaults), returned, stars


class _Body:
    """One function's local bindings and the formulas of its expressions."""

    def __init__(
        self, func: ast.FunctionDef | None, params: tuple[str, ...], info: ModuleInfo,
        globals_: dict[str, bool], vararg: ast.arg | None = None, kwarg: ast.arg | None = None,
        exprs: bool = True,
    ) -> None:
        self.info = info
        self.globals = globals_
        self.params = {n: i for i, n in enumerate(params)}
        #: the names of `*args` and `**kwargs` (never rebound: see `_name`)
        self.vararg = vararg.arg if vararg is not None else None
        self.kwarg = kwarg.arg if kwarg is not None else None
        #: local name -> the expressions bound to it (None: a binding of unknown kind)
        self.bindings: dict[str, list[ast.expr | None]] = {}
        self.returns: list[ast.expr] = []
        self.generator = False
        self.memo: dict[str, Formula] = {}
        self.active: set[str] = set()
        self.cyclic = False
        self.steps = 0
        if func is not None:
            self._scan(func.body, exprs)

    # ---- bindings
    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            # `a, b = value`: each gets the kind of the whole value, as flow's `_UNPACK`
            for t in target.elts:
                self._bind(t.value if isinstance(t, ast.Starred) else t, value)
        # attributes and subscripts bind no local name

    def _scan(self, body: list[ast.stmt], exprs: bool) -> None:
        """Bindings and `return`s of the body, nested definitions left out; with `exprs`
        False, statements only (see `summarise`)."""
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.Expr and not exprs:
                continue
            if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                self.bindings.setdefault(node.name, []).append(ast.Constant(value=None))  # type: ignore[attr-defined]
                continue
            if t is ast.Lambda:
                continue
            if t in (ast.Yield, ast.YieldFrom, ast.Await):
                self.generator = True
                return
            if t is ast.Return:
                value = node.value  # type: ignore[attr-defined]
                self.returns.append(value if value is not None else ast.Constant(value=None))
            elif t is ast.Assign:
                for target in node.targets:  # type: ignore[attr-defined]
                    self._bind(target, node.value)  # type: ignore[attr-defined]
            elif t in (ast.AnnAssign, ast.AugAssign):
                value = node.value  # type: ignore[attr-defined]
                if t is ast.AugAssign:
                    value = ast.BinOp(left=node.target, op=node.op, right=value)  # type: ignore[attr-defined]
                self._bind(node.target, value)  # type: ignore[attr-defined]
            elif t in (ast.For, ast.AsyncFor):
                # the element of what is iterated: a shape's items are ints, a tensor's
                # rows tensors (flow's `_element_kind`, approximated by the iterable's kind)
                self._bind(node.target, node.iter)  # type: ignore[attr-defined]
            elif t is ast.NamedExpr:
                self._bind(node.target, node.value)  # type: ignore[attr-defined]
            elif t in (ast.With, ast.AsyncWith):
                for item in node.items:  # type: ignore[attr-defined]
                    if item.optional_vars is not None:
                        self._unknown(item.optional_vars)
            elif t in (ast.Import, ast.ImportFrom):
                for a in node.names:  # type: ignore[attr-defined]
                    name = a.asname or a.name.split(".")[0]
                    self.bindings.setdefault(name, []).append(ast.Constant(value=None))
            elif t in (ast.Global, ast.Nonlocal):
                for name in node.names:  # type: ignore[attr-defined]
                    self.bindings.setdefault(name, []).append(None)
            elif t is ast.ExceptHandler and node.name:  # type: ignore[attr-defined]
                self.bindings.setdefault(node.name, []).append(None)  # type: ignore[attr-defined]
            elif t is ast.match_case:
                for n in ast.walk(node.pattern):  # type: ignore[attr-defined]
                    bound = getattr(n, "name", None) or getattr(n, "rest", None)
                    if isinstance(bound, str):  # `case [a, *rest]`: captured, kind unknown
                        self.bindings.setdefault(bound, []).append(None)
            elif t in COMPREHENSION_TYPES:
                continue  # its variables are its own; its walrus targets are rare
            elif t is ast.Delete:
                continue
            if exprs:
                stack.extend(reversed(list(ast.iter_child_nodes(node))))
            else:
                for name in reversed(STATEMENT_BLOCKS.get(t, ())):
                    stack.extend(reversed(getattr(node, name)))

    def _unknown(self, target: ast.expr) -> None:
        for n in ast.walk(target):
            if isinstance(n, ast.Name):
                self.bindings.setdefault(n.id, []).append(None)

    def returned(self) -> Formula:
        if not self.returns:
            return _CONST_F  # returns None
        return _max([self.formula(r) for r in self.returns])

    # ---- expressions
    def formula(self, e: ast.expr) -> Formula:
        t = type(e)
        if t is ast.Constant or t is ast.JoinedStr or t is ast.Lambda:
            return _CONST_F
        if t is ast.Name:
            return self._name(e.id)  # type: ignore[attr-defined]
        if t is ast.Attribute:
            if e.attr in _STATIC_ATTRS:  # type: ignore[attr-defined]
                return _CONST_F
            return self.formula(e.value)  # type: ignore[attr-defined]
        if t is ast.Subscript:
            return _max([self.formula(e.value), self.formula(e.slice)])  # type: ignore[attr-defined]
        if t is ast.Slice:
            return _max([self.formula(x) for x in (e.lower, e.upper, e.step) if x is not None])  # type: ignore[attr-defined]
        if t is ast.BinOp:
            return _max([self.formula(e.left), self.formula(e.right)])  # type: ignore[attr-defined]
        if t is ast.UnaryOp:
            return self.formula(e.operand)  # type: ignore[attr-defined]
        if t is ast.BoolOp:
            return _max([self.formula(v) for v in e.values])  # type: ignore[attr-defined]
        if t is ast.IfExp:
            return _max([self.formula(x) for x in (e.test, e.body, e.orelse)])  # type: ignore[attr-defined]
        if t in (ast.Tuple, ast.List, ast.Set):
            return _max([self.formula(x) for x in e.elts])  # type: ignore[attr-defined]
        if t is ast.Dict:
            return _max([self.formula(x) for x in e.values])  # type: ignore[attr-defined]
        if t is ast.Starred:
            return self.formula(e.value)  # type: ignore[attr-defined]
        if t is ast.Compare:
            return self._compare(e)  # type: ignore[arg-type]
        if t is ast.Call:
            return self._call(e)  # type: ignore[arg-type]
        return _UNKNOWN_F  # comprehensions, awaits, walrus...: not stated

    def _compare(self, e: ast.Compare) -> Formula:
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in e.ops):
            return _CONST_F
        if (
            len(e.ops) == 1
            and isinstance(e.ops[0], (ast.In, ast.NotIn))
            and isinstance(e.comparators[0], (ast.Tuple, ast.List))
        ):
            return _CONST_F  # membership in a display: folded (flow's `_kind_compare`)
        return _max([self.formula(x) for x in [e.left, *e.comparators]])

    def _name(self, name: str) -> Formula:
        i = self.params.get(name)
        bound = self.bindings.get(name)
        if name == self.vararg or name == self.kwarg:
            extra: Formula = (EXTRA_POS,) if name == self.vararg else (EXTRA_KW,)
            return extra if bound is None else _UNKNOWN_F
        if i is None and bound is None:
            if name in self.globals:  # a module-level name: a literal is a constant
                return _CONST_F if self.globals[name] else _UNKNOWN_F
            return _CONST_F  # imports, functions, classes, builtins: compile-time objects
        hit = self.memo.get(name)
        if hit is not None:
            return hit
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _GiveUp
        if name in self.active:
            # a name bound from itself (`n = n * s`): the least solution of the join, so
            # what the cycle adds is what its other bindings bring
            self.cyclic = True
            return _CONST_F
        self.active.add(name)
        outer = self.cyclic
        self.cyclic = False
        try:
            parts: list[Formula] = [(PARAM, i)] if i is not None else []
            for v in bound or ():
                parts.append(_UNKNOWN_F if v is None else self.formula(v))
            out = _max(parts)
        finally:
            self.active.discard(name)
        if not self.cyclic or not self.active:
            self.memo[name] = out  # read nothing unfinished: final
        self.cyclic = self.cyclic or outer
        return out

    def _args(self, call: ast.Call) -> list[Formula]:
        return [self.formula(a) for a in [*call.args, *(k.value for k in call.keywords)]]

    def _call(self, e: ast.Call) -> Formula:
        f = e.func
        if isinstance(f, ast.Call):
            made = self.info.resolve(f.func) or ""
            if made.startswith("mindspore.") and made.rsplit(".", 1)[-1] in _CONST_PRIMITIVES:
                return _CONST_F  # `P.Shape()(x)`
            return _max([self.formula(f), *self._args(e)])
        local = isinstance(f, ast.Name) and (f.id in self.params or f.id in self.bindings)
        head: ast.expr = f
        while isinstance(head, ast.Attribute):
            head = head.value
        shadowed = isinstance(head, ast.Name) and (head.id in self.params or head.id in self.bindings)
        q = None if shadowed else self.info.resolve(f)
        if q is None:
            if isinstance(f, ast.Attribute):
                if f.attr in _CONST_METHODS:
                    return _CONST_F
                recv = self.formula(f.value)
                if f.attr in _HOST_METHODS:
                    return (HOST, recv)
                return _max([recv, *self._args(e)])
            if local:
                return _max([self.formula(f), *self._args(e)])
            return _UNKNOWN_F
        last = q.rsplit(".", 1)[-1]
        if q.startswith("builtins."):
            if last in _CONST_BUILTINS:
                return _CONST_F
            if last in _SCALAR_BUILTINS:
                return (SCALAR, _max(self._args(e)))
            return _max(self._args(e))
        if q.startswith("mindspore."):
            if last in _SHAPE_FUNCS or last == "dtype":
                return _CONST_F
            if q in ("mindspore.mutable", "mindspore.common.mutable"):
                return _max(self._args(e))
            if last[:1].isupper() and q.startswith("mindspore.ops.") and not q.startswith(
                "mindspore.ops.functional"
            ):
                return _CONST_F  # a Primitive
            if q.startswith("mindspore.nn."):
                return _CONST_F  # a Cell
            return _TENSOR_F
        if q.startswith("numpy."):
            return (NUMPY, _max(self._args(e)))
        splice = 0
        positional: list[Formula] = []
        for i, a in enumerate(e.args):
            if isinstance(a, ast.Starred):
                if i != len(e.args) - 1 or not self._own(a.value, self.vararg):
                    return _UNKNOWN_F
                splice |= STAR_ARGS  # `f(x, *args)`: what this function's `*args` received
            else:
                positional.append(self.formula(a))
        keywords: list[tuple[str, Formula]] = []
        for k in e.keywords:
            if k.arg is None:
                if not self._own(k.value, self.kwarg):
                    return _UNKNOWN_F
                splice |= STAR_KWARGS
            else:
                keywords.append((k.arg, self.formula(k.value)))
        return (CALL, q, tuple(positional), tuple(keywords), splice)

    def _own(self, e: ast.expr, name: str | None) -> bool:
        """Is `e` this function's own `*args` / `**kwargs` (`name`), never rebound?"""
        return name is not None and isinstance(e, ast.Name) and e.id == name and name not in self.bindings


def _max(parts: list[Formula]) -> Formula:
    """`(MAX, ...)` of `parts`, simplified: nested maxima flattened, constant kinds joined
    into one, repeats dropped; a tensor absorbs everything."""
    flat: list[Formula] = []
    top = K_CONST
    for p in parts:
        for q in p[1:] if p[0] == MAX else (p,):
            if q[0] == CONST_:
                top = max(top, q[1])
            elif q not in flat:
                flat.append(q)
    if top == K_TENSOR or not flat:
        return (CONST_, top)
    if top != K_CONST:
        flat.append((CONST_, top))
    return flat[0] if len(flat) == 1 else (MAX, *flat)


def _size(f: Any) -> int:
    if type(f) is not tuple:
        return 1
    return 1 + sum(_size(x) for x in f)


#: what a formula is evaluated with: (parameter kinds, kinds `*args` received, kinds
#: `**kwargs` received by name)
Env = tuple[list[int], list[int], dict[str, int]]
_NO_EXTRA: tuple[list[int], dict[str, int]] = ([], {})


def evaluate(f: Formula, env: Env, call: Any) -> int:
    """The kind `f` gives in `env`; `call(qualname, positional kinds, keyword kinds)`
    answers a `CALL` node (the caller's index resolves it)."""
    tag = f[0]
    if tag == CONST_:
        return int(f[1])
    if tag == PARAM:
        return env[0][f[1]]
    if tag == MAX:
        out = K_CONST
        for x in f[1:]:
            k = evaluate(x, env, call)
            if k > out:
                out = k
                if k == K_TENSOR:
                    break
        return out
    if tag == EXTRA_POS:
        return max([K_CONST, *env[1]])
    if tag == EXTRA_KW:
        return max([K_CONST, *env[2].values()])
    if tag == CALL:
        positional = [evaluate(x, env, call) for x in f[2]]
        keywords = {name: evaluate(x, env, call) for name, x in f[3]}
        if f[4] & STAR_ARGS:
            positional.extend(env[1])
        if f[4] & STAR_KWARGS:
            for name, k in env[2].items():
                if name in keywords:
                    return K_UNKNOWN  # given twice: a TypeError
                keywords[name] = k
        return int(call(f[1], positional, keywords))
    k = evaluate(f[1], env, call)
    if tag == SCALAR:
        return K_CONST if k == K_CONST else K_UNKNOWN
    if tag == NUMPY:
        return K_VAR if k >= K_VAR else K_CONST
    return K_VAR if k >= K_VAR else k  # HOST
