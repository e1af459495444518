"""MS213: an `@ms.jit` function named like an attribute of its first argument."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable, Iterator
from importlib import resources

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.helpers import GraphRule, own_statements, returns_in
from npu_lsp.rules.graphmode.values import instances

_MAX_DEPTH = 4
#: numpy functions whose array MS213 takes for non-empty: a truthy array, or one of more than
#: one element, whose truth value raises (`np.zeros` and friends can hold one zero: left out)
_NUMPY_ARRAYS = frozenset(
    {"ones", "ones_like", "arange", "linspace", "asarray", "array", "eye", "identity"}
)
_NUMPY_RANDOM = "numpy.random."
#: bases a module class may have for MS213 to know its instances are truthy
_PLAIN_BASES = frozenset({"object", "builtins.object"})
_CACHE_KEY = "jit-first-argument-owner:calls"


@functools.cache
def _type_attributes() -> dict[str, frozenset[str]]:
    text = resources.files(__package__).joinpath("ms_jit_receiver_attributes.json").read_text("utf-8")
    return {k: frozenset(v) for k, v in json.loads(text)["types"].items()}


@functools.cache
def _cell_attributes() -> frozenset[str]:
    text = resources.files(__package__).joinpath("ms_cell_attributes.json").read_text("utf-8")
    return frozenset(json.loads(text)["attributes"])


@functools.cache
def _all_attributes() -> frozenset[str]:
    """Every name some known type has: a jit function named otherwise is never a method."""
    return frozenset().union(*_type_attributes().values(), _cell_attributes())


@rule(code="MS213", name="jit-first-argument-owner", severity="error", family="graphmode")
class JitFirstArgumentOwner(GraphRule):
    """## What it does
    Flags a call from Python code of an `@ms.jit` function whose first argument has an
    attribute with the function's name: `update(params, x)` with `params` a dict (which has
    `update`), `copy(ws, x)` with a list, `real(0.5, x)` with a float, `split("train", x)`
    with a str, `sum(a, x)` with a numpy array, `apply(net, x)` with a Cell, or an instance
    of the file's own class with such a method or attribute.

    ## Why is this bad?
    MindSpore 2.10's jit wrapper decides whether the function is a method by asking
    `hasattr(args[0], func.__name__)` of its first argument (a Tensor aside): when the
    answer is yes and the argument is truthy, it takes the argument for the object the
    method belongs to and sets `_mutable_flags` on it before compiling. A dict, list, tuple,
    str or number has no room for it (`AttributeError: 'dict' object has no attribute
    '_mutable_flags'`), a numpy array of several elements has no truth value, and an object
    that takes the attribute is dropped from the arguments and compiled as `self` (the call
    then fails with a wrong number of arguments or "The object is not callable"). Every
    syntax level fails, in PyNative and in GRAPH_MODE. An empty container or a zero is
    falsy and compiles, as does a name no type of the argument has (`predict(params, x)`).

    ## Example
    ```python
    @ms.jit
    def update(params, x):
        return ops.matmul(x, params["w"]) + params["b"]

    params = {"w": w, "b": b}
    out = update(params, x)
    ```

    ## Use instead
    Name the function after what it does, not after a method of its argument:
    ```python
    @ms.jit
    def update_params(params, x):
        return ops.matmul(x, params["w"]) + params["b"]

    out = update_params(params, x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - MindSpore 2.10 `mindspore/graph/api.py`, `_jit_ast.staging_specialize` and
      `_JitExecutor.__init__` / `compile` (`self.obj._mutable_flags = mutable_flags`).
    - Measured on MindSpore 2.10 with the written set `heldout25a` (`grad_jax_params_dict`)
      and its probes `fix25c_jitname_*`, `fix26a_jitname_*`: a dict (also from a helper,
      `ms.mutable` or given by keyword), list, tuple, str, int and float, a numpy array, an
      `nn.Dense` and an object of a user class are refused at LAX and STRICT; `{}`, `()`, `0`,
      a Tensor first, `predict(dict, ...)`, `update(list, ...)` and a jit function called
      from another compiled function compile. Probes `perf29_jitname_*`: the argument is
      what the name last holds, also through `if (params := ...)` (a dict refused, `0`
      compiled); a comprehension's variable of the same name does not rebind it.
    """

    nodes = (ast.FunctionDef,)
    words = ("jit", "ms_function")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, ast.FunctionDef)
        # most jit functions stop here: no known type has an attribute of this name
        if node.name not in _all_attributes() and not _class_member(node.name, ctx):
            return ()
        scope = ctx.scope
        if scope is None or scope.kind != "jit" or scope.function is not node:
            return ()
        if ctx.statement_parent(node) is not ctx.tree:
            return ()  # a nested function or a method: its first argument is meant as `self`
        names = _jit_names(node, ctx)
        if not names:
            return ()
        return self._check(node, names, ctx)

    def _check(self, node: ast.FunctionDef, names: frozenset[str], ctx: Context) -> Iterator[Diagnostic]:
        first = _first_parameter(node)
        for call, stmt, root in _host_calls(ctx):
            if not (isinstance(call.func, ast.Name) and call.func.id in names):
                continue
            arg = _first_argument(call, first)
            if arg is None:
                continue
            owner = _host_type(arg, stmt, root, ctx, 0)
            if owner is None or not owner[1] or node.name not in _attributes_of(owner[0], ctx):
                continue
            yield ctx.diagnostic(self, arg, _message(arg, owner[0], node.name, ctx))


def _message(arg: ast.expr, t: str | ast.ClassDef, fname: str, ctx: Context) -> str:
    label = t if isinstance(t, str) else t.name
    if t == "ndarray":
        error = "ValueError: The truth value of an array with more than one element is ambiguous"
    elif isinstance(t, str) and t != "Cell":
        error = f"AttributeError: '{t}' object has no attribute '_mutable_flags'"
    else:
        error = "it is dropped from the arguments and compiled as `self`"
    return (
        f"`{ctx.segment(arg)}` ({label}) has an attribute `{fname}`: MindSpore's jit wrapper takes "
        f"it for the object the compiled `{fname}` is a method of and fails ({error}); rename the function "
        "or give it this argument later"
    )


def _class_member(name: str, ctx: Context) -> bool:
    """Does a class of the module define a method `name`?"""
    return any(name in c.methods for c in ctx.scopes.info.classes.values())


def _jit_names(node: ast.FunctionDef, ctx: Context) -> frozenset[str]:
    """The names Python code calls the jit-wrapped `node` through: its own (decorated with
    `@ms.jit`, the AST capture mode) and module names bound to `ms.jit(<node's name>)`."""
    out: set[str] = set()
    if any(_is_jit(d, ctx) for d in node.decorator_list):
        out.add(node.name)
    for name, binds in ctx.module_bindings().items():
        for b in binds:
            if (
                isinstance(b, ast.Assign)
                and isinstance(b.value, ast.Call)
                and _is_jit(b.value, ctx)
                and b.value.args
                and isinstance(b.value.args[0], ast.Name)
                and b.value.args[0].id == node.name
            ):
                out.add(name)
    return frozenset(out)


def _is_jit(d: ast.expr, ctx: Context) -> bool:
    """`ms.jit`, `ms.jit(...)` (not `capture_mode="bytecode"`, which has no such wrapper)."""
    f = d.func if isinstance(d, ast.Call) else d
    q = ctx.qualname(f) or ""
    if q.rsplit(".", 1)[-1] not in ("jit", "ms_function") or not q.startswith("mindspore."):
        return False
    if isinstance(d, ast.Call):
        for k in d.keywords:
            if k.arg == "capture_mode" and not (isinstance(k.value, ast.Constant) and k.value.value == "ast"):
                return False
    return True


def _first_parameter(node: ast.FunctionDef) -> str | None:
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    return positional[0].arg if positional else None


def _first_argument(call: ast.Call, first: str | None) -> ast.expr | None:
    """What the wrapper sees as `args[0]`: the first positional argument, or the keyword
    argument bound to the first parameter (the wrapper binds keywords to the signature)."""
    if call.args:
        a = call.args[0]
        return None if isinstance(a, ast.Starred) else a
    if any(k.arg is None for k in call.keywords):
        return None
    return next((k.value for k in call.keywords if first is not None and k.arg == first), None)


# ------------------------------------------------------------------ Python code's calls
def _host_calls(ctx: Context) -> list[tuple[ast.Call, ast.stmt, ast.AST]]:
    """Calls Python code makes: at module level (in its blocks too) and in module-level
    functions MindSpore does not compile, each with its simple statement and the scope
    (module or function) whose names it reads; cached for the run."""
    hit: list[tuple[ast.Call, ast.stmt, ast.AST]] | None = ctx.cache.get(_CACHE_KEY)
    if hit is None:
        hit = list(_calls_in(ctx.tree.body, ctx.tree, ctx))
        ctx.cache[_CACHE_KEY] = hit
    return hit


def _calls_in(body: list[ast.stmt], root: ast.AST, ctx: Context) -> Iterator[tuple[ast.Call, ast.stmt, ast.AST]]:
    for st in body:
        if isinstance(st, ast.FunctionDef):
            if root is ctx.tree and ctx.scopes.scope_for(st) is None:
                yield from _calls_in(st.body, st, ctx)
            continue
        if isinstance(st, (ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            header = st.test if isinstance(st, (ast.If, ast.While)) else st.iter if isinstance(st, ast.For) else None
            if header is not None:
                for n in ast.walk(header):
                    if isinstance(n, ast.Call):
                        yield n, st, root
            for field in ("body", "orelse", "finalbody"):
                yield from _calls_in(getattr(st, field, []), root, ctx)
            for h in getattr(st, "handlers", []):
                yield from _calls_in(h.body, root, ctx)
            continue
        for n in ast.walk(st):
            if isinstance(n, ast.Call):
                yield n, st, root


# ------------------------------------------------------------------ the argument's type
#: a host value's type: a key of the attribute table, "Cell", or a class of the module;
#: with whether the value is truthy
_Owner = tuple["str | ast.ClassDef", bool]


def _attributes_of(t: str | ast.ClassDef, ctx: Context) -> frozenset[str]:
    if isinstance(t, str):
        return _cell_attributes() if t == "Cell" else _type_attributes().get(t, frozenset())
    return _class_attributes(t, ctx, 0)


def _host_type(e: ast.expr, stmt: ast.stmt, root: ast.AST, ctx: Context, depth: int) -> _Owner | None:
    """The type of the value `e` holds when `stmt` first runs, and whether it is truthy;
    None when unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(e, ast.Constant):
        v = e.value
        if isinstance(v, bool):
            return "bool", v
        if isinstance(v, (str, int, float)):
            return type(v).__name__, bool(v)
        return None
    if isinstance(e, ast.Dict):
        return "dict", bool(e.keys)
    if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
        return type(e).__name__.lower(), bool(e.elts)
    if isinstance(e, ast.DictComp):
        return "dict", True
    if isinstance(e, (ast.ListComp, ast.SetComp)):
        return ("list" if isinstance(e, ast.ListComp) else "set"), True
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        return _host_type(e.operand, stmt, root, ctx, depth + 1)
    if isinstance(e, ast.Name):
        value = _reaching_value(e.id, stmt, root, ctx)
        if value is None:
            return None
        value_stmt, value_root = value[1], value[2]
        return _host_type(value[0], value_stmt, value_root, ctx, depth + 1)
    if isinstance(e, ast.Call):
        return _call_type(e, stmt, root, ctx, depth)
    return None


def _call_type(e: ast.Call, stmt: ast.stmt, root: ast.AST, ctx: Context, depth: int) -> _Owner | None:
    q = ctx.qualname(e.func) or ""
    last = q.rsplit(".", 1)[-1]
    if q in ("builtins.dict", "builtins.list", "builtins.tuple", "builtins.set"):
        if e.keywords and last == "dict":
            return "dict", True
        if not e.args:
            return last, False
        inner = _host_type(e.args[0], stmt, root, ctx, depth + 1)
        return (last, inner[1]) if inner is not None else None
    if q in ("mindspore.mutable", "mindspore.common.mutable") and e.args:
        return _host_type(e.args[0], stmt, root, ctx, depth + 1)
    if q.startswith("numpy."):
        if q.startswith(_NUMPY_RANDOM) or last in _NUMPY_ARRAYS and _not_single(e):
            return "ndarray", True
        return None
    if q.startswith("mindspore.nn.") and last[:1].isupper():
        return "Cell", True
    if isinstance(e.func, ast.Attribute) and e.func.attr == "astype":
        inner = _host_type(e.func.value, stmt, root, ctx, depth + 1)
        return inner if inner is not None and inner[0] == "ndarray" else None
    if isinstance(e.func, ast.Name):
        return _module_callee_type(e.func.id, ctx, depth)
    return None


def _not_single(e: ast.Call) -> bool:
    """`np.array([...])` of a display of two or more items, or another array maker: an array
    whose truth value is True or raises."""
    if e.func and isinstance(e.func, ast.Attribute) and e.func.attr in ("array", "asarray"):
        a = e.args[0] if e.args else None
        return isinstance(a, (ast.List, ast.Tuple)) and len(a.elts) > 1
    return True


def _module_callee_type(name: str, ctx: Context, depth: int) -> _Owner | None:
    """What calling the module's own `name` gives: an instance of its class, or what every
    `return` of its function (not compiled) returns, when they agree."""
    binds = ctx.module_bindings().get(name, [])
    if len(binds) != 1:
        return None
    d = binds[0]
    if isinstance(d, ast.ClassDef):
        return (d, True) if _truthy_class(d, ctx, 0) else None
    if not isinstance(d, ast.FunctionDef) or ctx.scopes.scope_for(d) is not None:
        return None
    found: _Owner | None = None
    for r in returns_in(d.body):
        if r.value is None:
            return None
        t = _host_type(r.value, r, d, ctx, depth + 1)
        if t is None or (found is not None and found != t):
            return None
        found = t
    return found


def _truthy_class(cls: ast.ClassDef, ctx: Context, depth: int) -> bool:
    """Are the class's instances truthy: no `__bool__` / `__len__` of its own, and bases that
    are `object`, a `mindspore.nn` Cell or such classes of the module?"""
    if depth > _MAX_DEPTH or any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("__bool__", "__len__") for s in cls.body
    ):
        return False
    for b in cls.bases:
        q = ctx.qualname(b) or ""
        if q in _PLAIN_BASES or q.startswith("mindspore.nn."):
            continue
        base = _module_class(b, ctx)
        if base is None or not _truthy_class(base, ctx, depth + 1):
            return False
    return True


def _module_class(b: ast.expr, ctx: Context) -> ast.ClassDef | None:
    if not isinstance(b, ast.Name):
        return None
    binds = ctx.module_bindings().get(b.id, [])
    return binds[0] if len(binds) == 1 and isinstance(binds[0], ast.ClassDef) else None


def _class_attributes(cls: ast.ClassDef, ctx: Context, depth: int) -> frozenset[str]:
    """Names an instance surely has: the class body's definitions and assignments, what
    `__init__` stores on `self`, a Cell's own attributes, and its module bases' names."""
    out: set[str] = set()
    for s in cls.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(s.name)
            if isinstance(s, ast.FunctionDef) and s.name == "__init__":
                out.update(_self_stores(s))
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                if isinstance(t, ast.Name):
                    out.add(t.id)
    for b in cls.bases:
        if (ctx.qualname(b) or "").startswith("mindspore.nn."):
            out |= _cell_attributes()
        base = _module_class(b, ctx)
        if base is not None and depth < _MAX_DEPTH:
            out |= _class_attributes(base, ctx, depth + 1)
    return frozenset(out)


def _self_stores(init: ast.FunctionDef) -> set[str]:
    """`self.<name> = ...` statements directly in `__init__`'s body (run on every call)."""
    out: set[str] = set()
    for s in init.body:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                out.add(t.attr)
    return out


# ------------------------------------------------------------------ the name's value
def _reaching_value(name: str, stmt: ast.stmt, root: ast.AST, ctx: Context) -> tuple[ast.expr, ast.stmt, ast.AST] | None:
    """The value of the last `name = value` before `stmt` in `root` (the module, or a
    Python function), when that assignment runs on every path to `stmt`'s first run: it
    sits in a block that holds `stmt` or a statement around it (a loop around both runs
    it first). In a function that binds `name` nowhere, the module's one assignment of
    it. None otherwise."""
    if isinstance(root, ast.FunctionDef):
        found = instances(ctx).bindings_of(root).get(name, [])
        binds = _binding_statements(name, found, root, ctx)
        if not binds:
            if any(type(b) is ast.arg for b in found):
                return None  # a parameter
            module = ctx.module_bindings().get(name, [])
            if len(module) != 1 or not _plain_assign(module[0]):
                return None
            st = module[0]
            assert isinstance(st, ast.Assign)
            return st.value, st, ctx.tree
    else:
        binds = [b for b in ctx.module_bindings().get(name, []) if isinstance(b, ast.stmt)]
    before = [b for b in binds if getattr(b, "lineno", 0) < stmt.lineno]
    if not before:
        return None
    last = before[-1]
    value = last.value if isinstance(last, ast.Assign) and _plain_assign(last) else _tested_walrus(last, name)
    if value is None or not isinstance(last, ast.stmt) or not _encloses(last, stmt, ctx):
        return None
    return value, last, root


def _tested_walrus(st: ast.AST, name: str) -> ast.expr | None:
    """The value of `name := value` when it is what an `if` / `while` tests (alone or
    compared: `if (params := load()):`, `if (n := len(xs)) > 0:`), which runs whenever the
    statement does (measured, written/heldout25a probes `perf29_jitname_walrus_*`: the
    walrus's value is what the jit function is given)."""
    if not isinstance(st, (ast.If, ast.While)):
        return None
    test = st.test.left if isinstance(st.test, ast.Compare) else st.test
    if isinstance(test, ast.NamedExpr) and test.target.id == name:
        return test.value
    return None


def _plain_assign(st: ast.AST) -> bool:
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)


def _binding_statements(name: str, found: list[ast.AST], root: ast.FunctionDef, ctx: Context) -> list[ast.AST]:
    """The statements of `root`'s body that bind `name`, in source order, from values' shared
    binding index (`found`: its nodes for `name`), plus the bindings that index does not
    hold: `global` / `nonlocal` of the name and `except ... as name`. A comprehension's
    variable is the comprehension's own, not a binding of the function."""
    out: list[ast.AST] = []
    for b in found:
        st = b if isinstance(b, ast.stmt) else None if type(b) is ast.arg else _statement_around(b, ctx)
        if st is not None and st not in out:
            out.append(st)
    for st in own_statements(root.body, ctx):
        t = type(st)
        if (t is ast.Global or t is ast.Nonlocal) and name in st.names:  # type: ignore[attr-defined]
            out.append(st)
        elif t is ast.Try or t is getattr(ast, "TryStar", ast.Try):
            out.extend(h for h in st.handlers if h.name == name)  # type: ignore[attr-defined]
    out.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return out


def _statement_around(node: ast.AST, ctx: Context) -> ast.stmt | None:
    """The statement holding `node` (None inside a comprehension's `for`)."""
    p = ctx.parent(node)
    while p is not None and not isinstance(p, ast.stmt):
        if type(p) is ast.comprehension:
            return None
        p = ctx.parent(p)
    return p


def _encloses(binding: ast.stmt, stmt: ast.stmt, ctx: Context) -> bool:
    """Does the block that holds `binding` (`control.block_of`) hold `stmt` or a statement
    around it?"""
    _parent, block, index = block_of(binding, ctx)
    if index < 0:
        return False
    s: ast.AST | None = stmt
    for _ in range(64):
        if s is None or isinstance(s, ast.Module):
            return False
        if any(x is s for x in block):
            return True
        s = ctx.statement_parent(s)
    return False
