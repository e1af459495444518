"""MS138: Python code reading, after a call, a dict key or list item only compiled code put on `self`."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import STATEMENT_BLOCKS
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.helpers import own_nodes

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@rule(code="MS138", name="compiled-store-read-by-python", severity="error", family="graphmode")
class CompiledStoreReadByPython(Rule):
    """## What it does
    Flags Python code (outside compiled functions) that reads, after calling a cell, a key
    of a dict or an item of a list the cell holds on `self` (`ssm.cache["steps"]`,
    `net.history[0]`), when `__init__` binds that attribute to a dict display without the
    key (`self.cache = {}`) or to an empty list, and only the cell's compiled `construct`
    stores the key (`self.cache["steps"] = ...`) or appends to the list
    (`self.history.append(...)`).

    ## Why is this bad?
    Graph mode runs `construct` on its own copy of the dict or list: MindSpore 2.10 does not
    write those stores back to the Python object, which still holds what `__init__` put
    there after the call. The read fails in Python: `KeyError: 'steps'`, `IndexError: list
    index out of range`. (Under STRICT the dict store itself is refused, MS132.) `.get`,
    `len`, `in`, a key `__init__` put there and a plain attribute store (`self.count = 5`,
    written back) do not fail.

    ## Example
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.cache = {}

        def construct(self, x):
            self.cache["steps"] = 1
            return x * 2

    net = Net()
    y = net(x)
    print(net.cache["steps"])
    ```

    ## Use instead
    ```python
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def construct(self, x):
            self.steps = 1
            return x * 2
    ```
    (or return the value from `construct`).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 4: mutating a list or dict held on `self` is lost (MS142, MS185).
    - Measured on MindSpore 2.10 with the written set heldout16a (`ssm_recurrent_cache_dict_step`)
      and heldout16b probes `ls17_ds_*`: a key stored in `construct` read by Python after the
      call fails at LAX (`KeyError`), a list appended in `construct` read by index fails at LAX
      and STRICT; `.get`, `len`, `in`, a key `__init__` holds and an attribute store compile
      and run.
    """

    nodes = (ast.Module,)
    graph_only = False

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # cheapest first: most files build no instance of their own cells at module level
        instances = _instances(ctx)
        if not instances:
            return ()
        held = _held_empty(ctx, {c.name for c in instances.values()})
        instances = {n: c for n, c in instances.items() if c.name in held}
        if not instances:
            return ()
        out: list[Diagnostic] = []
        called: set[str] = set()
        python_put: set[tuple[str, str, object]] = set()
        for st in _module_statements(ctx.tree.body):
            for n in _expression_nodes(st):
                self._visit(n, ctx, instances, held, called, python_put, out)
        return out

    def _visit(
        self,
        n: ast.AST,
        ctx: Context,
        instances: dict[str, ast.ClassDef],
        held: dict[str, dict[str, ast.expr]],
        called: set[str],
        python_put: set[tuple[str, str, object]],
        out: list[Diagnostic],
    ) -> None:
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in instances:
                called.add(f.id)
            elif (
                isinstance(f, ast.Attribute)
                and f.attr in ("append", "insert", "extend")
                and isinstance(f.value, ast.Attribute)
                and isinstance(f.value.value, ast.Name)
            ):
                python_put.add((f.value.value.id, f.value.attr, None))  # Python fills the list
            return
        if not isinstance(n, ast.Subscript):
            return
        key = _constant_key(n.slice)
        holder = n.value
        if key is None or not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)):
            return
        name, attr = holder.value.id, holder.attr
        if isinstance(n.ctx, ast.Store):
            python_put.add((name, attr, key))
            return
        cls = instances.get(name)
        if cls is None or name not in called or (name, attr, key) in python_put or (name, attr, None) in python_put:
            return
        init = held[cls.name].get(attr)
        construct = _construct(cls)
        if init is None or construct is None:
            return
        why = _stored_only_in_graph(init, attr, key, construct)
        if why is not None:
            out.append(ctx.diagnostic(self, n, why.format(read=ctx.segment(n), attr=attr)))


def _stored_only_in_graph(init: ast.expr, attr: str, key: object, construct: ast.AST) -> str | None:
    """Why reading `obj.<attr>[key]` after a call fails, if only `construct` put it there."""
    if isinstance(init, ast.Dict) and isinstance(key, str):
        if any(isinstance(k, ast.Constant) and k.value == key for k in init.keys):
            return None
        for st in own_nodes(construct):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AugAssign) else []
            for t in targets:
                if (
                    isinstance(t, ast.Subscript)
                    and _on_self(t.value, attr)
                    and isinstance(t.slice, ast.Constant)
                    and t.slice.value == key
                ):
                    return (
                        "`{read}` reads a key only the compiled `construct` stores: graph mode does not write"
                        " `self.{attr}[...] = ...` back to the Python dict, which keeps what `__init__` put there"
                        " (KeyError); return the value from `construct`, or keep it in a plain attribute"
                        " (`self.steps = ...`)"
                    )
        return None
    if isinstance(init, ast.List) and not init.elts and isinstance(key, int) and not isinstance(key, bool):
        for c in own_nodes(construct):
            if (
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute)
                and c.func.attr == "append"
                and _on_self(c.func.value, attr)
            ):
                return (
                    "`{read}` indexes a list only the compiled `construct` appends to: graph mode does not"
                    " write `self.{attr}.append(...)` back to the Python list, which is still empty"
                    " (IndexError); return the values from `construct`"
                )
    return None


def _constant_key(e: ast.expr) -> object:
    """The constant a subscript reads (`"steps"`, `0`, `-1`), else None."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        v = e.operand.value
        return -v if type(v) is int else None
    return e.value if isinstance(e, ast.Constant) else None


def _on_self(e: ast.expr, attr: str) -> bool:
    return isinstance(e, ast.Attribute) and e.attr == attr and isinstance(e.value, ast.Name) and e.value.id == "self"


def _held_empty(ctx: Context, names: set[str]) -> dict[str, dict[str, ast.expr]]:
    """Class name -> {attr: value} for the `self.<attr> = {...}` / `= []` statements of its
    `__init__` (displays only), for the module's classes `names`."""
    out: dict[str, dict[str, ast.expr]] = {}
    for cls in ctx.tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name not in names:
            continue
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            continue
        found: dict[str, ast.expr] = {}
        for st in init.body:
            if isinstance(st, ast.Assign) and isinstance(st.value, (ast.Dict, ast.List)):
                for t in st.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        found[t.attr] = st.value
        if found:
            out[cls.name] = found
    return out


def _construct(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "construct"), None)


def _instances(ctx: Context) -> dict[str, ast.ClassDef]:
    """Module-level names bound once to an instance of a class of the module whose
    `construct` is compiled (`ssm = RecurrentSSM()`)."""
    body = ctx.tree.body
    classes = {c.name: c for c in body if type(c) is ast.ClassDef}
    if not classes:
        return {}
    bound: dict[str, list[ast.expr]] = {}
    for st in _module_statements(body):
        if isinstance(st, ast.Assign):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    bound.setdefault(t.id, []).append(st.value)
    out: dict[str, ast.ClassDef] = {}
    for name, values in bound.items():
        if len(values) != 1 or not isinstance(values[0], ast.Call) or not isinstance(values[0].func, ast.Name):
            continue
        cls = classes.get(values[0].func.id)
        construct = _construct(cls) if cls is not None else None
        if cls is not None and construct is not None and ctx.scopes.scope_for(construct) is not None:
            out[name] = cls
    return out


def _module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module's statements in source order, into `if` / `for` / `with` blocks, not into
    definitions."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, _DEFS):
            continue
        out.append(st)
        for block in STATEMENT_BLOCKS.get(type(st), ()):
            out.extend(_module_statements(getattr(st, block)))
    return out


def _expression_nodes(st: ast.stmt) -> list[ast.AST]:
    """The nodes of `st` itself (not of its nested statements) in evaluation order enough for
    "called before read": source order."""
    fields = STATEMENT_BLOCKS.get(type(st), ())
    nodes: list[ast.AST] = []
    for name, value in ast.iter_fields(st):
        if name in fields:
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ast.AST):
                nodes.extend(ast.walk(v))
    # an assignment's value runs before its targets are stored
    if isinstance(st, ast.Assign):
        value_nodes = list(ast.walk(st.value))
        target_nodes = [n for t in st.targets for n in ast.walk(t)]
        nodes = value_nodes + target_nodes
    return sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))) if not isinstance(st, ast.Assign) else nodes
