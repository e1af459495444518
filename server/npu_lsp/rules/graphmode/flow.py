"""Value kinds in compiled functions: which names hold graph *variables* (tensors computed at
run time) and which hold compile-time constants (Python values, shapes, dtypes, `self` config).

MindSpore treats these very differently: `if x.shape[0] > 2` is folded while compiling, while
`if x.sum() > 0` becomes a control-flow graph whose branches must agree in type. The analysis is
flow-insensitive per function (a name's kind is the "most variable" of everything bound to it),
which is exact for the usual construct style and errs towards "constant", i.e. towards silence.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from npu_lsp.astutil import child_nodes, statements, walk, walk_branches
from npu_lsp.scope import dotted

if TYPE_CHECKING:
    from npu_lsp.engine import Context


class Kind(IntEnum):
    """How much is known at compile time; larger = more dynamic."""

    CONST = 0  # a Python value known while compiling (int, str, shape, dtype, sub-cell...)
    UNKNOWN = 1  # cannot tell; rules stay silent
    VAR = 2  # a run-time scalar/object derived from a tensor (float(t), t.item(), t.asnumpy())
    TENSOR = 3  # a tensor computed at run time

    @property
    def dynamic(self) -> bool:
        return self >= Kind.VAR


# attributes of a tensor that are compile-time constants under static shapes
_STATIC_ATTRS = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "strides"})
_CONST_BUILTINS = frozenset(
    {"len", "isinstance", "issubclass", "type", "hasattr", "callable", "id_", "dir", "vars"}
)
_SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex"})
_HOST_METHODS = frozenset({"asnumpy", "tolist", "item", "numpy"})
_CONST_METHODS = frozenset({"dim", "ndimension", "nelement", "numel"})
_SHAPE_FUNCS = frozenset({"shape", "rank", "dtype", "size", "dyn_shape"})


@dataclass
class Flow:
    """Kinds and value shapes of the names of one function."""

    kinds: dict[str, Kind] = field(default_factory=dict)
    #: name -> set of type classes bound to it ("tensor", "tuple", "list", "dict", "none"...)
    types: dict[str, set[str]] = field(default_factory=dict)
    #: name -> dtype names explicitly given (astype/cast/Tensor(..., dtype))
    dtypes: dict[str, set[str]] = field(default_factory=dict)
    #: names bound to numpy/third-party objects
    numpy: set[str] = field(default_factory=set)
    #: names bound to nested functions or lambdas
    functions: set[str] = field(default_factory=set)
    #: id(expr) -> kind, only while the function's own analysis runs and its kinds have
    #: settled (the type passes ask for the same kinds again); None otherwise, since ids of
    #: freed nodes are reused
    _kind_memo: dict[int, Kind] | None = field(default=None, repr=False, compare=False)


@dataclass
class SelfInfo:
    """What `__init__` says about `self` attributes of the class owning a compiled method."""

    parameters: set[str] = field(default_factory=set)
    tensors: set[str] = field(default_factory=set)
    cells: set[str] = field(default_factory=set)
    lists: set[str] = field(default_factory=set)
    assigned: set[str] = field(default_factory=set)


class Analyzer:
    """Per-run cache of function flows (stored in `ctx.cache`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.flows: dict[int, Flow] = {}
        self._busy: set[int] = set()
        self._classes: dict[int, ast.ClassDef | None] = {}
        self._self_info: dict[int, SelfInfo] = {}
        self._module_calls: dict[str, list[ast.Call]] | None = None
        self._full = False
        self._kind_memo: dict[tuple[int, int], Kind] = {}

    # ------------------------------------------------------------------ entry points
    def flow(self, func: ast.AST | None) -> Flow:
        if func is None:
            return Flow()
        key = id(func)
        if key in self.flows:
            return self.flows[key]
        if key in self._busy:  # recursion through call-site propagation
            return Flow()
        self._busy.add(key)
        try:
            flow = self._analyse(func)
        finally:
            self._busy.discard(key)
        self.flows[key] = flow
        return flow

    def kind(self, expr: ast.AST, func: ast.AST | None = None) -> Kind:
        """Kind of `expr` evaluated inside `func` (default: the function being checked)."""
        func = func if func is not None else self.ctx.function
        key = (id(expr), id(func))
        hit = self._kind_memo.get(key)
        if hit is None:
            # flows are final once built, so answers can be remembered for the run
            hit = self._kind_memo[key] = self._kind(expr, self.flow(func), func)
        return hit

    def type_class(self, expr: ast.AST, func: ast.AST | None = None) -> str | None:
        """ "tensor", "tuple", "list", "dict", "none", "str", "scalar", "function" or None."""
        func = func if func is not None else self.ctx.function
        return self._type_class(expr, self.flow(func), func)

    def dtype_of(self, expr: ast.AST, func: ast.AST | None = None) -> str | None:
        func = func if func is not None else self.ctx.function
        return self._dtype(expr, self.flow(func))

    def is_numpy(self, expr: ast.AST, func: ast.AST | None = None) -> bool:
        func = func if func is not None else self.ctx.function
        flow = self.flow(func)
        if isinstance(expr, ast.Name):
            return expr.id in flow.numpy
        if isinstance(expr, ast.Call):
            q = self.ctx.qualname(expr.func)
            return bool(q and q.startswith("numpy.") and not q.startswith("numpy.random"))
        return False

    def owner_class(self, func: ast.AST | None) -> ast.ClassDef | None:
        """The class whose method `func` is (walking up through nested functions)."""
        if func is None:
            return None
        key = id(func)
        if key not in self._classes:
            node: ast.AST | None = func
            owner = None
            while node is not None:
                parent = self.ctx.parent(node)
                if isinstance(parent, ast.ClassDef):
                    owner = parent
                    break
                node = parent
            self._classes[key] = owner
        return self._classes[key]

    def self_info(self, cls: ast.ClassDef | None) -> SelfInfo:
        if cls is None:
            return SelfInfo()
        key = id(cls)
        if key in self._self_info:
            return self._self_info[key]
        info = SelfInfo()
        for item in cls.body:
            if (
                not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                or item.name != "__init__"
            ):
                continue
            for node in statements(item.body):
                targets: list[ast.expr] = []
                value: ast.expr | None = None
                if isinstance(node, ast.Assign):
                    targets, value = list(node.targets), node.value
                elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                    targets, value = [node.target], node.value
                for t in targets:
                    if not (
                        isinstance(t, ast.Attribute)
                        and isinstance(t.value, ast.Name)
                        and t.value.id == "self"
                    ):
                        continue
                    if item.name != "__init__":
                        continue
                    info.assigned.add(t.attr)
                    if isinstance(value, (ast.List, ast.ListComp)):
                        info.lists.add(t.attr)
                    if isinstance(value, ast.Call):
                        q = self.ctx.qualname(value.func) or ""
                        last = q.rsplit(".", 1)[-1]
                        if last in ("Parameter", "ParameterTuple"):
                            info.parameters.add(t.attr)
                        elif last == "Tensor" or q.startswith("mindspore.ops."):
                            info.tensors.add(t.attr)
                        elif q.startswith("mindspore.nn.") or self._is_local_cell(q):
                            info.cells.add(t.attr)
        # inherited Parameters (e.g. defined in a base class) are unknown: treat unknown attrs as such
        self._self_info[key] = info
        return info

    def _is_local_cell(self, q: str) -> bool:
        try:
            return self.ctx.scopes.is_cell_class(q)
        except RecursionError:
            return False

    # ------------------------------------------------------------------ analysis
    def _analyse(self, func: ast.AST) -> Flow:
        flow = Flow()
        scope = self.ctx.scopes.scope_for(func)
        args = (
            func.args
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            else None
        )
        if args is not None:
            self._bind_params(func, args, flow, scope)
        body: list[ast.AST] = []
        if isinstance(func, ast.Lambda):
            body = [func.body]
        elif isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = list(func.body)
        # Nested functions see the enclosing function's names (closures).
        parent_func = self._enclosing_function(func)
        if parent_func is not None:
            outer = self.flow(parent_func)
            for k, v in outer.kinds.items():
                flow.kinds.setdefault(k, v)
            for k, ts in outer.types.items():
                flow.types.setdefault(k, set(ts))
        bindings = list(self._bindings(body))
        # Kinds first (cheap, to a fixpoint), then types/dtypes, which depend on kinds; a
        # second types pass only when dtypes are in play (they propagate through names).
        try:
            if self._settle_kinds(bindings, flow, func):
                # kinds are final now (the type passes only re-derive them): memoise
                flow._kind_memo = {}
            for full in (True, True):
                if self._full and not flow.dtypes:
                    break
                self._full = full
                for target, value, how in bindings:
                    self._bind(target, value, how, flow, func)
        finally:
            self._full = False
            flow._kind_memo = None
        return flow

    def _settle_kinds(
        self, bindings: list[tuple[ast.AST, ast.AST | None, str]], flow: Flow, func: ast.AST
    ) -> bool:
        """Bind kinds for up to 3 rounds; True once a round changes nothing.

        After the first round a binding is evaluated again only when a name it reads changed
        since it was last evaluated: with the same inputs it cannot change anything (the
        confirming round over every binding was a third of the analysis)."""
        self._full = False
        reads = [_names_read(value) for _, value, _ in bindings]
        changed_at: dict[str, int] = {}  # name -> tick of its last change
        seen_at = [0] * len(bindings)  # binding -> tick when last evaluated
        tick = 0
        for rnd in range(3):
            changed = False
            for i, (target, value, how) in enumerate(bindings):
                if rnd and not any(changed_at.get(n, -1) >= seen_at[i] for n in reads[i]):
                    continue
                seen_at[i] = tick + 1
                if self._bind(target, value, how, flow, func):
                    changed = True
                    tick += 1
                    for n in _names_bound(target):
                        changed_at[n] = tick
            if not changed:
                return True
        return False

    def _enclosing_function(self, func: ast.AST) -> ast.AST | None:
        node = self.ctx.parent(func)
        while node is not None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return node
            if isinstance(node, ast.ClassDef):
                return None
            node = self.ctx.parent(node)
        return None

    def _bind_params(self, func: ast.AST, args: ast.arguments, flow: Flow, scope: object) -> None:
        positional = [*args.posonlyargs, *args.args]
        defaults: dict[str, ast.expr] = {}
        for a, d in zip(
            positional[len(positional) - len(args.defaults) :], args.defaults, strict=False
        ):
            defaults[a.arg] = d
        for a, kd in zip(args.kwonlyargs, args.kw_defaults, strict=False):
            if kd is not None:
                defaults[a.arg] = kd
        kind_name = getattr(scope, "kind", None)
        observed = self._observed_args(func, kind_name)
        is_method = self.owner_class(func) is not None and not isinstance(func, ast.Lambda)
        for name, dt in self._observed_dtypes(func, kind_name).items():
            flow.dtypes[name] = {dt}
        for i, a in enumerate(positional):
            if i == 0 and is_method and a.arg in ("self", "cls"):
                continue
            if a.arg in observed:
                flow.kinds[a.arg] = observed[a.arg][0]
                flow.types[a.arg] = observed[a.arg][1]
            elif a.arg in defaults:
                flow.kinds[a.arg] = Kind.CONST
                flow.types[a.arg] = {self._type_class(defaults[a.arg], flow, func) or "?"}
            elif kind_name in ("construct", "jit"):
                flow.kinds[a.arg] = Kind.TENSOR  # graph inputs are tensors unless shown otherwise
                flow.types[a.arg] = {"tensor"}
            else:
                flow.kinds[a.arg] = Kind.UNKNOWN
        for a in args.kwonlyargs:
            flow.kinds.setdefault(a.arg, Kind.CONST if a.arg in defaults else Kind.UNKNOWN)
        if args.vararg:
            flow.kinds[args.vararg.arg] = Kind.UNKNOWN
        if args.kwarg:
            flow.kinds[args.kwarg.arg] = Kind.UNKNOWN

    def _observed_args(
        self, func: ast.AST, kind_name: str | None
    ) -> dict[str, tuple[Kind, set[str]]]:
        """Kinds of arguments at the places this function is called: module-level calls of
        a Cell instance / jit function, or call sites in compiled code for helpers."""
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return {}
        params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        is_method = self.owner_class(func) is not None
        if is_method and params and params[0] in ("self", "cls"):
            params = params[1:]
        calls: list[tuple[ast.Call, ast.AST | None]] = []
        if kind_name == "helper":
            scope = self.ctx.scopes.scope_for(func)
            for site in getattr(scope, "call_sites", []):
                if site.call is not None and site.path == self.ctx.path:
                    calls.append((site.call, site.caller_node))
        elif kind_name in ("construct", "jit"):
            calls = [(c, None) for c in self._module_level_calls(func)]
        out: dict[str, tuple[Kind, set[str]]] = {}
        for call, caller in calls:
            caller_flow = self.flow(caller) if caller is not None else Flow()
            for i, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred) or i >= len(params):
                    break
                self._merge_observed(out, params[i], arg, caller_flow, caller)
            for kw in call.keywords:
                if kw.arg in params:
                    self._merge_observed(out, kw.arg, kw.value, caller_flow, caller)
        return out

    def _observed_dtypes(self, func: ast.AST, kind_name: str | None) -> dict[str, str]:
        """Dtypes of tensors passed to a construct / jit function at module level, when every
        call agrees (e.g. `net(Tensor(np.ones(3), ms.float32))`)."""
        if kind_name not in ("construct", "jit") or not isinstance(
            func, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            return {}
        params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        if self.owner_class(func) is not None and params and params[0] in ("self", "cls"):
            params = params[1:]
        seen: dict[str, set[str | None]] = {}
        for call in self._module_level_calls(func):
            for i, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred) or i >= len(params):
                    break
                seen.setdefault(params[i], set()).add(self._module_dtype(arg))
        return {p: next(iter(ds)) for p, ds in seen.items() if len(ds) == 1 and None not in ds}  # type: ignore[misc]

    def _module_dtype(self, arg: ast.expr, depth: int = 0) -> str | None:
        if isinstance(arg, ast.Name) and depth < 10:
            value = self._module_assignments().get(arg.id)
            return self._module_dtype(value, depth + 1) if value is not None else None
        if isinstance(arg, ast.Call):
            return explicit_dtype(arg, self.ctx)
        return None

    def _merge_observed(
        self,
        out: dict[str, tuple[Kind, set[str]]],
        name: str,
        arg: ast.expr,
        flow: Flow,
        func: ast.AST | None,
    ) -> None:
        k = self._module_kind(arg) if func is None else self._kind(arg, flow, func)
        t = "tensor" if k == Kind.TENSOR else (self._type_class(arg, flow, func) or "?")
        if name in out:
            k0, t0 = out[name]
            out[name] = (max(k0, k), t0 | {t})
        else:
            out[name] = (k, {t})

    def _module_kind(self, arg: ast.expr) -> Kind:
        """Kind of an argument passed from module level into a Cell or jit function."""
        if (
            isinstance(arg, ast.Constant)
            or isinstance(arg, (ast.Set, ast.Tuple, ast.List, ast.Dict))
            and not any(
                self._module_kind(e) == Kind.TENSOR
                for e in child_nodes(arg)
                if isinstance(e, ast.expr)
            )
        ):
            return Kind.CONST
        if isinstance(arg, ast.Call):
            q = self.ctx.qualname(arg.func) or ""
            if q.rsplit(".", 1)[-1] in ("Tensor", "Parameter") or q.startswith("mindspore.ops."):
                return Kind.TENSOR
            return Kind.UNKNOWN
        if isinstance(arg, ast.Name):
            value = self._module_assignments().get(arg.id)
            if value is not None and value is not arg:
                return self._module_kind(value)
        return Kind.UNKNOWN

    def _eager_statements(self) -> list[ast.stmt]:
        """Simple statements of code that runs as plain Python: module level and the bodies
        of functions that are not compiled (e.g. `def test_x():`), compound statements opened."""
        key = "eager-statements"
        cached = self.ctx.cache.get(key)
        if cached is None:
            cached = []
            scope_for = self.ctx.scopes.scope_for
            stack: list[ast.stmt] = list(reversed(self.ctx.tree.body))
            while stack:
                st = stack.pop()
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if scope_for(st) is None:
                        stack.extend(reversed(st.body))
                    continue
                if isinstance(st, ast.ClassDef):
                    stack.extend(
                        reversed(
                            [
                                b
                                for b in st.body
                                if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                            ]
                        )
                    )
                    continue
                blocks: list[ast.stmt] = []
                for name in ("body", "orelse", "finalbody"):
                    blocks.extend(getattr(st, name, []) or [])
                for h in getattr(st, "handlers", []) or []:
                    blocks.extend(h.body)
                cached.append(st)
                stack.extend(reversed(blocks))
            self.ctx.cache[key] = cached
        return cached

    def _module_assignments(self) -> dict[str, ast.expr]:
        """`name = value` in plain-Python code (module level and uncompiled functions)."""
        key = "module-assignments"
        cached = self.ctx.cache.get(key)
        if cached is None:
            cached = {}
            for st in self._eager_statements():
                if (
                    isinstance(st, ast.Assign)
                    and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)
                ):
                    cached.setdefault(st.targets[0].id, st.value)
            for st in self.ctx.tree.body:  # module level wins over function locals
                if (
                    isinstance(st, ast.Assign)
                    and len(st.targets) == 1
                    and isinstance(st.targets[0], ast.Name)
                ):
                    cached[st.targets[0].id] = st.value
            self.ctx.cache[key] = cached
        return cached

    def _module_level_calls(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """Calls like `net(x, 3)` (net = Net()) or `f(x)` (f a jit function) made from plain
        Python code: module level or uncompiled functions such as tests."""
        if self._module_calls is None:
            self._module_calls = {}
            instance_of: dict[str, str] = {}
            for name, value in self._module_assignments().items():
                if isinstance(value, ast.Call) and isinstance(
                    value.func, (ast.Name, ast.Attribute)
                ):
                    q = self.ctx.qualname(value.func)
                    instance_of[name] = (q or dotted_last(value.func)).rsplit(".", 1)[-1]
            for st in self._eager_statements():
                compound = isinstance(
                    st, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)
                )
                exprs: list[ast.AST] = (
                    [c for c in child_nodes(st) if not isinstance(c, ast.stmt | ast.excepthandler)]
                    if compound
                    else [st]
                )
                for e in exprs:
                    for node in walk_branches(e):
                        if not isinstance(node, ast.Call):
                            continue
                        if isinstance(node.func, ast.Name):
                            target = instance_of.get(node.func.id, node.func.id)
                            self._module_calls.setdefault(target, []).append(node)
                        elif isinstance(node.func, ast.Call) and isinstance(
                            node.func.func, ast.Name
                        ):
                            self._module_calls.setdefault(node.func.func.id, []).append(
                                node
                            )  # Net()(x)
        owner = self.owner_class(func)
        if owner is not None:
            return self._module_calls.get(owner.name, []) if func.name == "construct" else []
        return self._module_calls.get(func.name, [])

    def _bindings(self, body: list[ast.AST]) -> list[tuple[ast.AST, ast.AST | None, str]]:
        """(target, value, how) for every binding statement in `body`, not descending into
        nested scopes. Only statements are visited: comprehension variables do not leak in
        Python 3, and `:=` is rejected by graph mode anyway (MS110)."""
        out: list[tuple[ast.AST, ast.AST | None, str]] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            t = type(node)
            if t is ast.Assign:
                for target in node.targets:  # type: ignore[attr-defined]
                    out.append((target, node.value, "="))  # type: ignore[attr-defined]
                continue
            if t is ast.AugAssign:
                value = ast.BinOp(left=node.target, op=node.op, right=node.value)  # type: ignore[attr-defined]
                out.append((node.target, value, "="))  # type: ignore[attr-defined]
                continue
            if t is ast.AnnAssign:
                if node.value is not None:  # type: ignore[attr-defined]
                    out.append((node.target, node.value, "="))  # type: ignore[attr-defined]
                continue
            if t in (ast.FunctionDef, ast.AsyncFunctionDef):
                out.append((ast.Name(id=node.name), None, "def"))  # type: ignore[attr-defined]
                continue
            if t in (ast.For, ast.AsyncFor):
                out.append((node.target, node.iter, "for"))  # type: ignore[attr-defined]
            elif t in (ast.With, ast.AsyncWith):
                for item in node.items:  # type: ignore[attr-defined]
                    if item.optional_vars is not None:
                        out.append((item.optional_vars, item.context_expr, "="))
            elif t is ast.ClassDef or not isinstance(
                node, ast.stmt | ast.excepthandler | ast.match_case
            ):
                continue
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(node, name, None)
                if block:
                    stack.extend(block)
        return out

    def _bind(
        self, target: ast.AST, value: ast.AST | None, how: str, flow: Flow, func: ast.AST
    ) -> bool:
        if how == "def":
            assert isinstance(target, ast.Name)
            if target.id in flow.functions:
                return False
            flow.functions.add(target.id)
            flow.kinds[target.id] = Kind.CONST
            flow.types.setdefault(target.id, set()).add("function")
            return True
        if value is None:
            return False
        if how == "for":
            return self._bind_iter(target, value, flow, func)
        if isinstance(target, (ast.Tuple, ast.List)):
            changed = False
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=False):
                    changed |= self._bind(t, v, "=", flow, func)
                return changed
            k = self._kind(value, flow, func)
            for t in target.elts:
                changed |= self._set(t.value if isinstance(t, ast.Starred) else t, k, None, flow)
            return changed
        k = self._kind(value, flow, func)
        if not self._full:  # kinds only until they settle; types and dtypes afterwards
            return self._set(target, k, None, flow)
        tclass = self._type_class(value, flow, func)
        changed = self._set(target, k, tclass, flow)
        if isinstance(target, ast.Name):
            if self.is_numpy_value(value, flow) and target.id not in flow.numpy:
                flow.numpy.add(target.id)
                changed = True
            dt = self._dtype(value, flow)
            if dt is not None and dt not in flow.dtypes.setdefault(target.id, set()):
                flow.dtypes[target.id].add(dt)
                changed = True
            if isinstance(value, ast.Lambda) and target.id not in flow.functions:
                flow.functions.add(target.id)
                changed = True
        return changed

    def is_numpy_value(self, value: ast.AST, flow: Flow) -> bool:
        if isinstance(value, ast.Name):
            return value.id in flow.numpy
        if isinstance(value, ast.Call):
            q = self.ctx.qualname(value.func)
            if q and q.startswith("numpy.") and not q.startswith("numpy.random"):
                return True
            if isinstance(value.func, ast.Attribute) and value.func.attr == "asnumpy":
                return True
        if isinstance(value, ast.BinOp):
            return self.is_numpy_value(value.left, flow) or self.is_numpy_value(value.right, flow)
        return False

    def _bind_iter(self, target: ast.AST, it: ast.AST, flow: Flow, func: ast.AST) -> bool:
        if isinstance(it, ast.Call) and isinstance(target, (ast.Tuple, ast.List)):
            q = self.ctx.qualname(it.func)
            if q == "builtins.enumerate" and len(target.elts) == 2 and it.args:
                changed = self._set(target.elts[0], Kind.CONST, "scalar", flow)
                return changed | self._bind_iter(target.elts[1], it.args[0], flow, func)
            if q == "builtins.zip" and len(target.elts) == len(it.args):
                changed = False
                for t, a in zip(target.elts, it.args, strict=False):
                    changed |= self._bind_iter(t, a, flow, func)
                return changed
        k = self._element_kind(it, flow, func)
        if isinstance(target, (ast.Tuple, ast.List)):
            changed = False
            for t in target.elts:
                changed |= self._set(t, k, None, flow)
            return changed
        return self._set(target, k, "tensor" if k == Kind.TENSOR else None, flow)

    def _element_kind(self, it: ast.AST, flow: Flow, func: ast.AST) -> Kind:
        if isinstance(it, (ast.Tuple, ast.List)):
            return max((self._kind(e, flow, func) for e in it.elts), default=Kind.CONST)
        if isinstance(it, ast.Call) and self.ctx.qualname(it.func) == "builtins.range":
            return max((self._kind(a, flow, func) for a in it.args), default=Kind.CONST)
        if (
            isinstance(it, ast.Attribute)
            and isinstance(it.value, ast.Name)
            and it.value.id == "self"
        ):
            return Kind.CONST  # CellList, tuples of layers
        return self._kind(it, flow, func)

    def _set(self, target: ast.AST, k: Kind, t: str | None, flow: Flow) -> bool:
        if not isinstance(target, ast.Name):
            return False
        changed = False
        old = flow.kinds.get(target.id)
        if old is None or k > old:
            flow.kinds[target.id] = k
            changed = True
        if t is not None:
            ts = flow.types.setdefault(target.id, set())
            if t not in ts:
                ts.add(t)
                changed = True
        return changed

    # ------------------------------------------------------------------ expressions
    def _kind(self, e: ast.AST, flow: Flow, func: ast.AST | None) -> Kind:
        memo = flow._kind_memo
        if memo is None:
            return self._kind_of(e, flow, func)
        hit = memo.get(id(e))
        if hit is None:
            hit = memo[id(e)] = self._kind_of(e, flow, func)
        return hit

    def _kind_of(self, e: ast.AST, flow: Flow, func: ast.AST | None) -> Kind:
        # dispatch on the exact node type: one dict lookup instead of a chain of isinstance
        t = type(e)
        if t is ast.Constant:
            return Kind.CONST
        if t is ast.Name:
            return flow.kinds.get(e.id, Kind.CONST)  # type: ignore[attr-defined]  # globals, imports, builtins: compile-time values
        handler = _KIND_HANDLERS.get(t)
        return handler(self, e, flow, func) if handler is not None else Kind.UNKNOWN

    def _kind_attribute(self, e: ast.Attribute, flow: Flow, func: ast.AST | None) -> Kind:
        if e.attr in _STATIC_ATTRS:
            return Kind.CONST
        if isinstance(e.value, ast.Name) and e.value.id == "self":
            info = self.self_info(self.owner_class(func))
            if e.attr in info.parameters or e.attr in info.tensors:
                return Kind.TENSOR
            return Kind.CONST
        return self._kind(e.value, flow, func)

    def _kind_subscript(self, e: ast.Subscript, flow: Flow, func: ast.AST | None) -> Kind:
        base = self._kind(e.value, flow, func)
        if base == Kind.TENSOR:
            return Kind.TENSOR
        return max(base, self._kind(e.slice, flow, func))

    def _kind_compare(self, e: ast.Compare, flow: Flow, func: ast.AST | None) -> Kind:
        if all(isinstance(op, (ast.Is, ast.IsNot)) for op in e.ops):
            return Kind.CONST
        return max(self._kind(x, flow, func) for x in [e.left, *e.comparators])

    def _kind_binop(self, e: ast.BinOp, flow: Flow, func: ast.AST | None) -> Kind:
        return max(self._kind(e.left, flow, func), self._kind(e.right, flow, func))

    def _kind_unary(self, e: ast.UnaryOp, flow: Flow, func: ast.AST | None) -> Kind:
        return self._kind(e.operand, flow, func)

    def _kind_boolop(self, e: ast.BoolOp, flow: Flow, func: ast.AST | None) -> Kind:
        return max(self._kind(v, flow, func) for v in e.values)

    def _kind_ifexp(self, e: ast.IfExp, flow: Flow, func: ast.AST | None) -> Kind:
        return max(self._kind(x, flow, func) for x in (e.test, e.body, e.orelse))

    def _kind_elts(self, e: ast.Tuple, flow: Flow, func: ast.AST | None) -> Kind:
        return max((self._kind(x, flow, func) for x in e.elts), default=Kind.CONST)

    def _kind_dict(self, e: ast.Dict, flow: Flow, func: ast.AST | None) -> Kind:
        vals = [v for v in e.values if v is not None]
        return max((self._kind(v, flow, func) for v in vals), default=Kind.CONST)

    def _kind_starred(self, e: ast.Starred, flow: Flow, func: ast.AST | None) -> Kind:
        return self._kind(e.value, flow, func)

    def _kind_const(self, e: ast.AST, flow: Flow, func: ast.AST | None) -> Kind:
        return Kind.CONST

    def _kind_slice(self, e: ast.Slice, flow: Flow, func: ast.AST | None) -> Kind:
        parts = [p for p in (e.lower, e.upper, e.step) if p is not None]
        return max((self._kind(p, flow, func) for p in parts), default=Kind.CONST)

    def _call_kind(self, e: ast.Call, flow: Flow, func: ast.AST | None) -> Kind:
        args = [*e.args, *(k.value for k in e.keywords)]
        arg_kind = max((self._kind(a, flow, func) for a in args), default=Kind.CONST)
        q = self.ctx.qualname(e.func)
        if q:
            last = q.rsplit(".", 1)[-1]
            if q.startswith("builtins."):
                if last in _CONST_BUILTINS:
                    return Kind.CONST
                if last in _SCALAR_BUILTINS or last == "str":
                    return Kind.VAR if arg_kind.dynamic else Kind.CONST
                return arg_kind
            if q.startswith("mindspore."):
                if last in _SHAPE_FUNCS or last == "dtype":
                    return Kind.CONST
                if (
                    last[:1].isupper()
                    and q.startswith("mindspore.ops.")
                    and not q.startswith("mindspore.ops.functional")
                ):
                    return Kind.CONST  # creating a Primitive: a callable constant
                if q.startswith("mindspore.nn."):
                    return Kind.CONST  # creating a Cell
                return Kind.TENSOR
            if q.startswith("numpy."):
                return Kind.VAR if arg_kind.dynamic else Kind.CONST
            return arg_kind
        if isinstance(e.func, ast.Attribute):
            method = e.func.attr
            recv = self._kind(e.func.value, flow, func)
            if method in _CONST_METHODS:
                return Kind.CONST
            if method in _HOST_METHODS:
                return Kind.VAR if recv.dynamic else recv
            if isinstance(e.func.value, ast.Name) and e.func.value.id == "self":
                return arg_kind
            if (
                isinstance(e.func.value, ast.Attribute)
                and isinstance(e.func.value.value, ast.Name)
                and e.func.value.value.id == "self"
            ):
                return arg_kind  # a sub-cell or helper object called with these arguments
            return max(recv, arg_kind)
        if isinstance(e.func, ast.Name) and e.func.id in flow.kinds:
            return (
                max(flow.kinds[e.func.id], arg_kind)
                if e.func.id not in flow.functions
                else arg_kind
            )
        if isinstance(e.func, ast.Call):  # ms.grad(f)(x) and friends
            return max(self._call_kind(e.func, flow, func), arg_kind)
        return arg_kind

    def _type_class(self, e: ast.AST, flow: Flow, func: ast.AST | None) -> str | None:
        if isinstance(e, ast.Constant):
            if e.value is None:
                return "none"
            if isinstance(e.value, str):
                return "str"
            if isinstance(e.value, (int, float, bool)):
                return "scalar"
            return None
        if isinstance(e, ast.Tuple):
            return "tuple"
        if isinstance(e, (ast.List, ast.ListComp)):
            return "list"
        if isinstance(e, (ast.Dict, ast.DictComp)):
            return "dict"
        if isinstance(e, ast.Lambda):
            return "function"
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            builtin = {"list": "list", "tuple": "tuple", "dict": "dict"}.get(e.func.id)
            if builtin and self.ctx.qualname(e.func) == f"builtins.{e.func.id}":
                return builtin
        if isinstance(e, ast.Name):
            ts = flow.types.get(e.id)
            if e.id in flow.functions:
                return "function"
            if ts and len(ts) == 1:
                t = next(iter(ts))
                return None if t == "?" else t
            if not ts and e.id not in flow.kinds:
                return None
        if self._kind(e, flow, func) == Kind.TENSOR and isinstance(
            e, (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Call, ast.Name, ast.Attribute)
        ):
            if isinstance(e, ast.Call):
                q = self.ctx.qualname(e.func) or ""
                if q.startswith("builtins.") and q.rsplit(".", 1)[-1] in (
                    "tuple",
                    "list",
                    "zip",
                    "map",
                    "enumerate",
                ):
                    return None
                if isinstance(e.func, ast.Attribute) and e.func.attr in (
                    "split",
                    "chunk",
                    "unbind",
                ):
                    return None
                if not q.startswith("mindspore.") and not (
                    isinstance(e.func, ast.Attribute)
                    and self._kind(e.func.value, flow, func) == Kind.TENSOR
                ):
                    return None  # a sub-cell or helper may return anything
            if isinstance(e, ast.Subscript) and self._type_class(e.value, flow, func) != "tensor":
                return None
            return "tensor"
        return None

    def _dtype(self, e: ast.AST, flow: Flow, depth: int = 0) -> str | None:
        """Dtype of a tensor expression when the code states it or it follows from an input
        whose dtype is visible where the network is called. None when unknown."""
        if depth > 20:
            return None
        if isinstance(e, ast.Name):
            ds = flow.dtypes.get(e.id)
            return next(iter(ds)) if ds and len(ds) == 1 else None
        if isinstance(e, ast.Compare):
            return "bool"
        if isinstance(e, ast.UnaryOp):
            return "bool" if isinstance(e.op, ast.Not) else self._dtype(e.operand, flow, depth + 1)
        if isinstance(e, ast.Subscript):
            return self._dtype(e.value, flow, depth + 1)
        if isinstance(e, ast.BinOp):
            left, right = (
                self._dtype(e.left, flow, depth + 1),
                self._dtype(e.right, flow, depth + 1),
            )
            if left and right:
                return left if left == right else None
            known, other = (left, e.right) if left else (right, e.left)
            # int tensor combined with a Python float is promoted; float stays as it is
            if (
                known
                and isinstance(other, ast.Constant)
                and (known.startswith(("float", "bfloat")) or isinstance(other.value, int))
            ):
                return known
            return None
        if not isinstance(e, ast.Call):
            return None
        explicit = explicit_dtype(e, self.ctx)
        if explicit is not None:
            return explicit
        f = e.func
        name = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
        if name.lower() in _DTYPE_CHANGING:
            return None
        if isinstance(f, ast.Attribute):
            recv = f.value
            is_self_obj = (
                isinstance(recv, ast.Name)
                and recv.id == "self"
                or (
                    isinstance(recv, ast.Attribute)
                    and isinstance(recv.value, ast.Name)
                    and recv.value.id == "self"
                )
            )
            if not is_self_obj:
                # a tensor method: x.sum(), x.reshape(...)
                return self._dtype(recv, flow, depth + 1)
        q = self.ctx.qualname(f) or ""
        foreign = q and not q.startswith(("mindspore.", self.ctx.scopes.info.module + "."))
        if foreign and not (
            isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute))
        ):
            return None
        # ops.relu(x), self.relu(x), self.dense(x): same dtype as the first tensor argument
        for arg in e.args:
            d = self._dtype(arg, flow, depth + 1)
            if d is not None:
                return d
        return None


_DTYPE_CHANGING = frozenset(
    {
        "argmax",
        "argmin",
        "shape",
        "equal",
        "not_equal",
        "greater",
        "less",
        "greater_equal",
        "less_equal",
        "isnan",
        "isinf",
        "isfinite",
        "logical_and",
        "logical_or",
        "logical_not",
        "nonzero",
        "unique",
        "sort",
        "topk",
        "argsort",
        "masked_select",
        "size",
        "rank",
        "cast",
        "astype",
        "to",
        "gather",
        "embedding",
        "onehot",
        "one_hot",
        "tuple",
        "list",
        "len",
    }
)
_DTYPE_ALIASES = {
    "single": "float32",
    "float": "float32",
    "half": "float16",
    "double": "float64",
    "float_": "float64",
    "int_": "int64",
    "bool_": "bool",
    "long": "int64",
    "int": "int64",
}


def dtype_name(expr: ast.AST | None) -> str | None:
    """`ms.float32`, `np.float32`, `mstype.int32`, "float32" -> canonical dtype name."""
    if expr is None:
        return None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        name = expr.value
    else:
        parts = dotted(expr)
        if not parts:
            return None
        name = parts[-1]
    name = name.lower()
    name = _DTYPE_ALIASES.get(name, name)
    if name.startswith(("float", "int", "uint", "bool", "bfloat", "complex")):
        return name
    return None


def explicit_dtype(e: ast.Call, ctx: Context) -> str | None:
    """Dtype a call states itself: x.astype(t), ops.cast(x, t), Tensor(v, t), np.array(v, t)..."""
    f = e.func
    q = ctx.qualname(f) or ""
    last = q.rsplit(".", 1)[-1] if q else (f.attr if isinstance(f, ast.Attribute) else "")
    for kw in e.keywords:
        if kw.arg == "dtype":
            return dtype_name(kw.value)
    if isinstance(f, ast.Attribute) and f.attr in ("astype", "to") and e.args:
        return dtype_name(e.args[0])
    if last.lower() == "cast" and len(e.args) >= 2:
        return dtype_name(e.args[1])
    if (
        last in ("Tensor", "array", "asarray", "ones", "zeros", "full", "empty")
        and len(e.args) >= 2
    ):
        return dtype_name(e.args[1] if last != "full" or len(e.args) < 3 else e.args[2])
    if last in ("Tensor", "array", "asarray") and e.args:
        inner = e.args[0]
        if isinstance(inner, ast.Call):
            return explicit_dtype(inner, ctx)
    return None


def dotted_last(expr: ast.AST) -> str:
    parts = dotted(expr)
    return parts[-1] if parts else ""


def analyzer(ctx: Context) -> Analyzer:
    """The per-run Analyzer (created on first use)."""
    a = ctx.cache.get(Analyzer)
    if a is None:
        a = Analyzer(ctx)
        ctx.cache[Analyzer] = a
    return a


def _names_read(value: ast.AST | None) -> frozenset[str]:
    """Names an expression reads (what its kind can depend on)."""
    if value is None:
        return frozenset()
    if type(value) is ast.Name:
        return frozenset((value.id,))
    return frozenset(n.id for n in walk(value) if type(n) is ast.Name)


def _names_bound(target: ast.AST) -> list[str]:
    """Names a binding target assigns (`a`, `a, (b, *c)`)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _names_bound(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _names_bound(t)]
    return []


_KIND_HANDLERS: dict[type[ast.AST], Any] = {
    ast.Attribute: Analyzer._kind_attribute,
    ast.Subscript: Analyzer._kind_subscript,
    ast.Call: Analyzer._call_kind,
    ast.Compare: Analyzer._kind_compare,
    ast.BinOp: Analyzer._kind_binop,
    ast.UnaryOp: Analyzer._kind_unary,
    ast.BoolOp: Analyzer._kind_boolop,
    ast.IfExp: Analyzer._kind_ifexp,
    ast.Tuple: Analyzer._kind_elts,
    ast.List: Analyzer._kind_elts,
    ast.Set: Analyzer._kind_elts,
    ast.Dict: Analyzer._kind_dict,
    ast.Starred: Analyzer._kind_starred,
    ast.JoinedStr: Analyzer._kind_const,
    ast.Lambda: Analyzer._kind_const,
    ast.Slice: Analyzer._kind_slice,
}
