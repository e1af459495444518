"""MS189: an in-place container method called as a statement on the result of a call."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, file_mentions
from npu_lsp.rules.graphmode.self_attribute_assignment import EXPANDED_METHODS

#: the statement forms MindSpore also turns into an assignment of the receiver: `lst.pop()`
#: as a statement binds the remaining list (measured: `d.setdefault(k, [x]).pop()` fails as
#: `.append` does)
_REBINDING_METHODS = EXPANDED_METHODS | {"pop"}


@rule(code="MS189", name="method-statement-on-call-result", severity="error", family="graphmode")
class MethodStatementOnCallResult(GraphRule):
    """## What it does
    Flags a statement in compiled code that calls an in-place container method (`append`,
    `extend`, `insert`, `update`, `clear`, `reverse`, `pop`) on the result of a call:
    `groups.setdefault(k, []).append(v)`, `d.get("a").append(x)`,
    `self.buffers().append(x)`, `list(xs).append(y)`.
    Under the default LAX level, also such a statement on a name bound to a container LAX
    builds as a Python object (JIT Fallback: `dict(...)` or `collections.OrderedDict(...)`
    given graph values or Parameters; `r = dict(**base, **extra)`, then `r.update({...})`,
    `r.clear()`, `r["k"].append(x)`) when `r` is read afterwards in the function, or
    returned and the module reads the result as a container (`out.keys()`, `out["k"]`,
    `for k, v in net(x).items()`). Under STRICT, which refuses those calls given graph
    variables (MS131), only `dict(...)` of the cell's Parameters (`dict(w=self.w)`).
    At both levels, also such a statement on a module-level instance of the file's plain
    class (or `@ms.jit_class`) whose method of that name returns None (a loss scaler's
    `scaler.update(finite)`), when the function reads the name afterwards.

    ## Why is this bad?
    MindSpore's graph parser rewrites such a statement into an assignment of the receiver
    (`T.append(v)` becomes `T = T.append(v)`, its `parse_expr_statement_white_list`), and a
    call cannot be assigned to: `RuntimeError: Only supported augassign to attribute of self,
    variable and index value, but got <class 'ast.Call'>.`, at every syntax level, whatever
    the container holds. PyNative runs the code. On a name, an attribute or an item
    (`groups[k].append(v)`, `self.items.append(v)`) the statement compiles. On a Python
    dict the rewrite assigns Python's result, `None`: the next read fails ("'NoneType'
    object is not subscriptable", "has no attribute 'keys'"). A dict display (`{**a, **b}`)
    and `dict(a=1.0)` of constants are graph dicts and compile; unread, or only printed
    by the caller, the None is harmless.

    ## Example
    ```python
    def construct(self, x, labels):
        groups = {}
        for i, label in enumerate(labels.tolist()):
            groups.setdefault(label, []).append(x[i])
        ...
    ```

    ## Use instead
    Bind the container first, then mutate the name:
    ```python
    def construct(self, x, labels):
        groups = {}
        for i, label in enumerate(labels.tolist()):
            members = groups.get(label, [])
            members.append(x[i])
            groups[label] = members
        ...
    ```
    or keep the grouping on the device (`ops.unsorted_segment_sum(x, labels, n)`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level; statements the graph front end rewrites).
    - MindSpore 2.10 `mindspore/graph/_parse/parser.py`: `expand_expr_statement` and
      `parse_expr_statement_white_list`; measured with written/famc probes `sd_*` (setdefault,
      get, a method of `self`, `list(...)` as receivers of append/extend/insert/update/pop
      rejected at LAX and STRICT; `d["a"].append(x)` and `lst[0].append(x)` compile);
      the LAX Python-object form with written/heldout15b probes `ls17b_interp_*`,
      `ls17b_dict_*`, `ls17b_od_*` and heldout15a case `r2_metric_results_dict_update_kwargs`.
    - `s = set()` then `s.update([...])` (or `s.clear()`) and a read of `s`: a set is a Python
      object at every level, so the rewrite binds None, constants or not: written/lax probes
      `fix32f_set_update_*` ("'NoneType' object has no attribute '__len__'" at LAX and
      STRICT; `s.add(v)` is not rewritten and compiles).
    """

    nodes = (ast.Expr,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Expr
        call = node.value
        if not (
            type(call) is ast.Call
            and type(call.func) is ast.Attribute
            and call.func.attr in _REBINDING_METHODS
        ):
            return
        if type(call.func.value) is not ast.Call:
            if ctx.scope is not None and call.func.attr in _NONE_RETURNING:
                yield from self._on_interpreted(node, call, ctx)
                yield from self._on_plain_object(node, call, ctx)
            return
        receiver = ctx.segment(call.func.value)
        yield ctx.diagnostic(
            self,
            call,
            f"`.{call.func.attr}(...)` as a statement on the call `{receiver}`: MindSpore rewrites it as an "
            f"assignment to the call and refuses it; bind the container to a name first",
        )

    def _on_plain_object(self, st: ast.Expr, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """`scaler.update(finite)` on a module-level instance of a plain class of the file
        whose `update` returns None, the name read again in the function: the rewrite binds
        None to it (measured at LAX and STRICT: written/heldout36d case
        `lossscale_manager_class_python_state`, probes `fix36d_ob_*`, `fix36d_ob2_*`)."""
        assert type(call.func) is ast.Attribute
        receiver = call.func.value
        func = ctx.function
        if type(receiver) is not ast.Name or type(func) is not ast.FunctionDef:
            return
        method = _plain_method(receiver.id, call.func.attr, func, ctx)
        if method is None or not _read_after(receiver.id, st, func):
            return
        yield ctx.diagnostic(
            self,
            call,
            f"MindSpore rewrites the statement `{ctx.segment(call.func)}(...)` as `{receiver.id} = "
            f"{ctx.segment(call.func)}(...)`, and `{method.name}` returns None: `{receiver.id}` is None "
            f"afterwards (\"'NoneType' object has no attribute ...\"); name the method otherwise "
            f"(not `{call.func.attr}`), or have it `return self`",
        )

    def _on_interpreted(self, st: ast.Expr, call: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        """LAX: the statement `d.update(...)` (or `d["k"].append(...)`) on a container LAX
        runs as a Python object, read again in the function: the rewrite binds Python's
        `None` result to the receiver."""
        assert type(call.func) is ast.Attribute
        root = call.func.value
        while type(root) is ast.Subscript:
            root = root.value
        func = ctx.function
        if type(root) is not ast.Name or func is None:
            return
        found = interpreted_binding(root.id, st, func, ctx)
        if found is None:
            return
        built, variables = found
        python_set = ctx.qualname(built.func) == _PYTHON_SET
        if (
            ctx.scope is not None
            and ctx.scope.strict
            and not python_set
            and (variables or ctx.qualname(built.func) != "builtins.dict")
        ):
            # STRICT refuses `dict(...)` of graph variables and `OrderedDict(...)` itself
            # (MS131); `dict(w=self.w)` of Parameters runs there and the update binds None
            # (measured, probe `ls17b_params_only_dict_update_read`)
            return
        if not (
            _read_after(root.id, st, func) or (_returns(root.id, func) and _caller_reads_result(func, ctx))
        ):
            return
        if python_set:
            yield ctx.diagnostic(
                self,
                call,
                f"`{root.id}` is a Python set (no graph type), and MindSpore rewrites `{ctx.segment(call.func)}(...)` "
                f"as an assignment of its result: Python's `{call.func.attr}` returns None, so `{root.id}` is None "
                f"afterwards; call `{root.id}.add(v)` per value, or keep the values in a list",
            )
            return
        yield ctx.diagnostic(
            self,
            call,
            f"`{root.id}` is a Python object (`{ctx.segment(built.func)}(...)` of graph values runs by JIT "
            f"Fallback), and MindSpore rewrites `{ctx.segment(call.func)}(...)` as an assignment of its result: "
            f"Python's `{call.func.attr}` returns None, so `{root.id}` is None afterwards; build a dict display "
            f"(`{{**a, **b}}`, `{{\"k\": v}}`) or assign the items (`{root.id}[k] = v`)",
        )


def _plain_method(name: str, attr: str, func: ast.FunctionDef, ctx: Context) -> ast.FunctionDef | None:
    """The method `attr` of the plain class (no base; `@ms.jit_class` or none) of the file that the
    module-level `name` is an instance of (`scaler = DynamicScaler()`), when it never returns
    a value and `func` reads `name` as that global (no parameter or store of it); else None."""
    q = ctx.scopes.info.instances.get(name)
    if not q:
        return None
    cls = next(
        (st for st in ctx.tree.body if type(st) is ast.ClassDef and q.rsplit(".", 1)[-1] == st.name), None
    )
    if cls is None or cls.bases or cls.keywords:
        return None
    # `@ms.jit_class` rewrites the same way (probe `fix36d_ob2_jit_class`)
    if any(ctx.qualname(d) != "mindspore.jit_class" for d in cls.decorator_list):
        return None
    method = next((st for st in cls.body if type(st) is ast.FunctionDef and st.name == attr), None)
    if method is None or method.decorator_list:
        return None
    if any(type(r) is ast.Return and r.value is not None and not _none(r.value) for r in ast.walk(method)):
        return None
    a = func.args
    if name in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
        return None
    if any(type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load for n in ast.walk(func)):
        return None
    return method


def _none(e: ast.expr) -> bool:
    return type(e) is ast.Constant and e.value is None


#: Python container methods that change their receiver and return None
_NONE_RETURNING = EXPANDED_METHODS - {"register_hook"}

#: constructors LAX runs as Python (JIT Fallback, a PyExecute node) when given graph values:
#: measured, `dict(**base, **extra)`, `dict(base)`, `dict(zip(keys, [x.sum()]))`,
#: `dict(a=x)` and `OrderedDict(a=x)` (written/heldout15b probes `ls17b_interp_*`,
#: `ls17b_dict_call_*`, `ls17b_od_*`); `dict(a=1.0)` folds to a graph constant and compiles
#: `set(...)` is no graph type at all: a Python object at every level, whatever it holds
#: (measured, written/lax probes `fix32f_set_update_const`: `s = set(); s.update([1, 2]);
#: len(s)` fails with "'NoneType' object has no attribute '__len__'" at LAX and STRICT)
_PYTHON_SET = "builtins.set"
_INTERPRETED_CONTAINERS = frozenset({"builtins.dict", "collections.OrderedDict", _PYTHON_SET})


def _container_names(func: ast.AST, ctx: Context) -> dict[str, list[tuple[tuple[int, int], ast.expr | None]]]:
    """For a function that binds some name to `dict(...)` / `OrderedDict(...)`: every store
    of such a name, (position, the value a single-target `=` gives it, else None). Empty
    for any other function; once per function, only in files that spell such a call."""
    key = ("ms189-containers", id(func))
    found: dict[str, list[tuple[tuple[int, int], ast.expr | None]]] | None = ctx.cache.get(key)
    if found is not None:
        return found
    found = {}
    if file_mentions(ctx, "dict(") or file_mentions(ctx, "OrderedDict") or file_mentions(ctx, "= set("):
        stores: dict[str, list[tuple[tuple[int, int], ast.expr | None]]] = {}
        wanted: set[str] = set()
        for n in ast.walk(func):
            if type(n) is ast.Assign:
                single = len(n.targets) == 1 and type(n.targets[0]) is ast.Name
                v = n.value
                if single and type(v) is ast.Call and ctx.qualname(v.func) in _INTERPRETED_CONTAINERS:
                    wanted.add(n.targets[0].id)  # type: ignore[attr-defined]
                for t in n.targets:
                    for x in ast.walk(t):
                        if type(x) is ast.Name:
                            stores.setdefault(x.id, []).append(((x.lineno, x.col_offset), v if single else None))
            elif type(n) in (ast.AugAssign, ast.AnnAssign, ast.For, ast.comprehension, ast.NamedExpr):
                for x in ast.walk(n.target):  # type: ignore[attr-defined]
                    if type(x) is ast.Name:
                        stores.setdefault(x.id, []).append(((x.lineno, x.col_offset), None))
        found = {k: stores[k] for k in wanted}
    ctx.cache[key] = found
    return found


def interpreted_binding(
    name: str, st: ast.stmt | ast.expr, func: ast.AST, ctx: Context
) -> tuple[ast.Call, bool] | None:
    """The call `name = dict(...)` / `OrderedDict(...)` with graph values that binds `name`
    last before `st` in `func` (None when the last binding before it is anything else), and
    whether a graph variable is among them (else only Parameters of the cell are)."""
    stores = _container_names(func, ctx).get(name)
    if not stores:
        return None
    at = (st.lineno, st.col_offset)
    before = [x for x in stores if x[0] < at]
    if not before:
        return None
    value = max(before, key=lambda x: x[0])[1]
    if not isinstance(value, ast.Call) or ctx.qualname(value.func) not in _INTERPRETED_CONTAINERS:
        return None
    if ctx.qualname(value.func) == _PYTHON_SET:
        return value, False
    a = analyzer(ctx)
    params: set[str] | None = None
    held = False
    for arg in [*value.args, *(k.value for k in value.keywords)]:
        for sub in ast.walk(arg):
            if isinstance(sub, ast.Name) and a.kind(sub).dynamic:
                return value, True
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                # a Parameter of the cell is a graph value too (`OrderedDict(w1=self.w1)`)
                if params is None:
                    params = a.self_info(a.owner_class(ctx.function)).parameters
                held = held or sub.attr in params
    return (value, False) if held else None


def _read_after(name: str, st: ast.stmt, func: ast.AST) -> bool:
    """Is `name` used as a container after `st` in `func` before a statement rebinds it
    (`name[k]`, `name.keys()`, `len(name)`, `for k in name`)? Binding it to another name or
    returning it reads the None without failing (measured, probe
    `ls17b_dict_call_update_alias_read`)."""
    end = (st.end_lineno or st.lineno, st.end_col_offset or 0)
    rebound: tuple[int, int] | None = None
    reads: list[tuple[int, int]] = []
    for n in ast.walk(func):
        if type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load:
            pos = (n.lineno, n.col_offset)
            if pos > end and (rebound is None or pos < rebound):
                rebound = pos
            continue
        for used in _container_uses(n):
            if type(used) is ast.Name and used.id == name and (used.lineno, used.col_offset) > end:
                reads.append((used.lineno, used.col_offset))
    # `d = f(d)` reads before it rebinds: the value is read on the rebinding line too
    return any(rebound is None or r[0] <= rebound[0] for r in reads)


def _container_uses(n: ast.AST) -> list[ast.expr]:
    """The expressions `n` uses as a container: `v[k]`, `v.attr`, `f(v)`, `for _ in v`, `*v`."""
    t = type(n)
    if t is ast.Subscript or t is ast.Attribute or t is ast.Starred:
        return [n.value]  # type: ignore[attr-defined]
    if t is ast.Call:
        return list(n.args)  # type: ignore[attr-defined]
    if t is ast.For or t is ast.comprehension:
        return [n.iter]  # type: ignore[attr-defined]
    return []


def _returns(name: str, func: ast.AST) -> bool:
    """Does `func` hand `name` back (`return name`)?"""
    return any(
        isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id == name
        for r in ast.walk(func)
    )


def _caller_reads_result(func: ast.AST, ctx: Context) -> bool:
    """Does the module read what calling `func` returns as a container: `out.keys()`,
    `out["k"]`, `for k, v in net(x).items()` with `out = net(x)` (`net` an instance of the
    class whose `construct` `func` is, or `func` itself by name)? Measured: a dict rebound
    to None and returned fails there ("'NoneType' object has no attribute 'keys'", "is not
    subscriptable"); printing it or dropping it runs (probes `ls17b_dict_update_returned_*`)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    callees: set[str] = set()
    built = ""  # `Net()(x)`: the class called, then its instance
    if func.name == "construct":
        cls = analyzer(ctx).owner_class(func)
        if cls is None:
            return False
        suffix = "." + cls.name
        callees = {n for n, q in ctx.scopes.info.instances.items() if q.endswith(suffix)}
        built = cls.name
    elif any(st is func for st in ctx.tree.body):
        callees = {func.name}
    def called(c: ast.expr) -> bool:
        if type(c) is not ast.Call:
            return False
        f = c.func
        return (type(f) is ast.Name and f.id in callees) or (
            type(f) is ast.Call and type(f.func) is ast.Name and f.func.id == built
        )

    held: set[str] = set()
    for st in ctx.tree.body:
        for n in ast.walk(st):
            if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name and called(n.value):
                held.add(n.targets[0].id)
            elif any(called(u) for u in _container_uses(n) if type(n) is not ast.Call):
                return True
    return bool(held) and any(
        isinstance(n, (ast.Attribute, ast.Subscript))
        and isinstance(n.value, ast.Name)
        and n.value.id in held
        for st in ctx.tree.body
        for n in ast.walk(st)
    )
