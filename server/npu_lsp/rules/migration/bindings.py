"""Everything a name, attribute or dict key can be bound to in one module, for the migration
rules' value following (`values.Flow`): one visit of the tree, flow-insensitive.

Names are bound per function scope (assignments, parameters and their defaults, loop names,
imports made inside functions); attributes by name (`x.attr = ...`, class-level fields,
argparse options' `default=`/`choices=`, `set_defaults`, `Namespace(...)`); dict keys by
name (`{"device": ...}`, `dict(device=...)`, `cfg["device"] = ...`). The same visit records
each node's parent and indexes the node types `Flow` looks at, so the rules need no other
traversal of the module.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from npu_lsp.engine import Context

Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda

_NAMESPACE_CALLS = frozenset({"Namespace", "SimpleNamespace", "dict"})
_SCOPED = frozenset({ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_INDEXED = frozenset(
    {
        ast.Call,
        ast.Compare,
        ast.Assign,
        ast.Name,
        ast.Attribute,
        ast.Subscript,
        ast.Import,
        ast.ImportFrom,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
    }
)


class Bindings(ast.NodeVisitor):
    """Everything a name, attribute or key can be bound to in one module (flow-insensitive)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.names: dict[int, dict[str, list[ast.expr]]] = {}
        self.params: dict[int, dict[str, tuple[ast.FunctionDef | ast.AsyncFunctionDef, int]]] = {}
        self.attrs: dict[str, list[ast.expr]] = {}
        self.keys: dict[str, list[ast.expr]] = {}
        self.choices: dict[str, list[ast.expr]] = {}
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.returns: dict[int, list[ast.expr]] = {}
        self.calls: dict[str, list[ast.Call]] = {}
        #: `<x>.name(...)` calls by method name, and the methods taking `self` (their
        #: arguments start after the receiver)
        self.method_calls: dict[str, list[ast.Call]] = {}
        self.methods: set[int] = set()
        #: what lists named so are grown with (`x += [...]`, `x.append(...)`, `x.extend(...)`)
        self.grown: dict[str, list[ast.expr]] = {}
        #: `__init__` methods -> their class's name (calls to the class pass their arguments)
        self.init_of: dict[int, str] = {}
        #: imports inside functions (scope id -> bound name -> dotted name); the engine's
        #: `qualname` knows the module's own imports only
        self.local_imports: dict[int, dict[str, str]] = {}
        self.scope_of: dict[int, Scope] = {}
        self.parents: dict[int, ast.AST] = {}
        #: the module's nodes of the `_INDEXED` types, in visiting order
        self.nodes: dict[type[ast.AST], list[ast.AST]] = {}
        #: the callees resolved while visiting, with their answers (`ctx.qualname` depends on
        #: the whole module's imports and definitions: a reused visit asks them again)
        self.asked: list[tuple[ast.expr, str | None]] = []
        #: for bindings joined from chunks (`merge`): each part, for rules that keep what
        #: they find per chunk (`part_memo`)
        self.parts: list[Bindings] = []
        #: a part's own memo, kept with it between runs (see `values.ChunkBindings`), and
        #: the statements it was made from
        self.memo: dict[Any, Any] = {}
        self.stmts: list[ast.stmt] = []
        #: for bindings joined from a document's chunks: what the document keeps between
        #: runs for the whole module (`values.Flow`'s index of its chunks' records)
        self.document: dict[Any, Any] | None = None
        self._current: Scope = ctx.tree
        self._work: list[tuple[ast.AST, ast.AST, Scope]] = []

    def first_line(self) -> int:
        """The line of the first statement visited, now (a document renumbers kept trees)."""
        return self.stmts[0].lineno if self.stmts else 0

    # ---- scopes
    def run(self, tree: ast.Module, body: list[ast.stmt] | None = None) -> Bindings:
        """One pre-order traversal with an explicit stack of (node, parent, scope): no
        Python call per node for the nodes nothing is recorded about (most of them).
        `body`: only these top-level statements of `tree` (see `merge`)."""
        self.names.setdefault(id(tree), {})
        stmts = tree.body if body is None else body
        self.stmts = stmts
        work = self._work = [(stmt, tree, tree) for stmt in reversed(stmts)]
        pop, push = work.pop, work.append
        parents, scope_of, indexed = self.parents, self.scope_of, self.nodes
        handlers, functions, field_cache = _HANDLERS, _FUNCTION_KINDS, _FIELD_CACHE
        name_t, attribute_t = ast.Name, ast.Attribute
        leaves, ast_t = _LEAVES, ast.AST
        names, attributes = indexed.setdefault(name_t, []), indexed.setdefault(attribute_t, [])
        while work:
            node, parent, scope = pop()
            kind = type(node)
            parents[id(node)] = parent
            # the two commonest nodes first: a name has no child, an attribute one
            if kind is name_t:
                scope_of[id(node)] = scope
                names.append(node)
                continue
            if kind is attribute_t:
                attributes.append(node)
                value = node.value  # type: ignore[attr-defined]
                push((value, node, scope))
                continue
            if kind in _SCOPED:
                scope_of[id(node)] = scope
            if kind in _INDEXED:
                indexed.setdefault(kind, []).append(node)
            self._current = scope
            if kind in functions:
                self._function(node, scope)
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(self, node)  # its bookkeeping; it pushes the children it wants
                continue
            for name in field_cache.get(kind) or _fields(kind):  # reversed already
                value = getattr(node, name, None)
                if type(value) is list:
                    for child in reversed(value):
                        if type(child) not in leaves and isinstance(child, ast_t):
                            push((child, node, scope))
                elif type(value) not in leaves and isinstance(value, ast_t):
                    push((value, node, scope))
        return self

    def _function(self, node: ast.AST, scope: Scope) -> None:
        """A def or lambda: its parameters and body in its own scope; decorators and
        defaults (visited first) in the enclosing one."""
        push = self._work.append
        self.names.setdefault(id(node), {})
        if isinstance(node, ast.Lambda):
            self._params(node)
            push((node.body, node, node))
            return
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        self._bind(node.name, None)
        self.functions.setdefault(node.name, []).append(node)
        self._params(node)
        for stmt in reversed(node.body):
            push((stmt, node, node))
        a = node.args
        outer = [*node.decorator_list, *a.defaults, *(k for k in a.kw_defaults if k is not None)]
        for d in reversed(outer):
            push((d, node, scope))

    def _params(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults))
        defaults += list(a.defaults)
        bound = self.names[id(fn)]
        params = self.params.setdefault(id(fn), {})
        for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            bound.setdefault(arg.arg, [])
            if default is not None:
                bound[arg.arg].append(default)
            if not isinstance(fn, ast.Lambda):
                params[arg.arg] = (fn, index)
        for arg, kw_default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            bound.setdefault(arg.arg, [])
            if kw_default is not None:
                bound[arg.arg].append(kw_default)
            if not isinstance(fn, ast.Lambda):
                params[arg.arg] = (fn, -1)
        for extra in (a.vararg, a.kwarg):
            if extra is not None:
                bound.setdefault(extra.arg, [])

    @property
    def scope(self) -> Scope:
        return self._current

    def _bind(self, name: str, value: ast.expr | None) -> None:
        values = self.names[id(self.scope)].setdefault(name, [])
        if value is not None:
            values.append(value)

    def generic_visit(self, node: ast.AST) -> None:
        """Queue `node`'s children (in the current scope) for `run`'s traversal."""
        push, scope = self._work.append, self._current
        for name in _FIELD_CACHE.get(type(node)) or _fields(type(node)):  # reversed already
            value = getattr(node, name, None)
            if type(value) is list:
                for child in reversed(value):
                    if type(child) not in _LEAVES and isinstance(child, ast.AST):
                        push((child, node, scope))
            elif type(value) not in _LEAVES and isinstance(value, ast.AST):
                push((value, node, scope))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.name == "__init__":
                    self.init_of[id(stmt)] = node.name
                elif not any(
                    isinstance(d, ast.Name) and d.id == "staticmethod" for d in stmt.decorator_list
                ):
                    self.methods.add(id(stmt))
        for stmt in node.body:  # class-level fields are attributes of the instances
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.value is not None:
                    self.attrs.setdefault(stmt.target.id, []).append(stmt.value)
            elif isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        self.attrs.setdefault(t.id, []).append(stmt.value)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".", 1)[0]
            self._local_import(bound, alias.name if alias.asname else bound)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        for alias in node.names:
            self._local_import(alias.asname or alias.name, f"{node.module}.{alias.name}")

    def _local_import(self, bound: str, dotted_name: str) -> None:
        if isinstance(self.scope, ast.Module):
            return  # the engine resolves module-level imports itself
        self._bind(bound, None)
        self.local_imports.setdefault(id(self.scope), {})[bound] = dotted_name

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not isinstance(self.scope, (ast.Module, ast.Lambda)):
            self.returns.setdefault(id(self.scope), []).append(node.value)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self._bind(node.target.id, None)
            self.grown.setdefault(node.target.id, []).append(node.value)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._bind(node.target.id, node.value)
        self.generic_visit(node)

    def _target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, value)
        elif isinstance(target, ast.Attribute):
            if value is not None:
                self.attrs.setdefault(target.attr, []).append(value)
        elif isinstance(target, ast.Subscript):
            key = const_str(target.slice)
            if key is not None and value is not None:
                self.keys.setdefault(key, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = (
                value.elts
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                else [None] * len(target.elts)
            )
            for t, v in zip(target.elts, pairs, strict=True):
                self._target(t, v)
        elif isinstance(target, ast.Starred):
            self._target(target.value, None)

    def _loop_target(self, target: ast.expr) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self._bind(node.id, None)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._iteration(node.target, node.iter)
        self.generic_visit(node)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self._iteration(node.target, node.iter)
        self.generic_visit(node)

    def _iteration(self, target: ast.expr, iterable: ast.expr) -> None:
        """`for dev in ["cuda:0", "cuda:1"]`: the name takes the elements (`Flow` follows a
        list, tuple or set literal into its elements); `for op, dev in product(ops, devs)`
        and `zip(...)`: each name takes the elements of its own iterable; other targets
        are unknown."""
        if isinstance(target, ast.Name):
            self._bind(target.id, iterable)
            return
        parts = _parallel_iterables(self, target, iterable)
        if parts is None:
            self._loop_target(target)
            return
        for t, part in zip(target.elts, parts, strict=True):  # type: ignore[attr-defined]
            if isinstance(t, ast.Name):
                self._bind(t.id, part)
            else:
                self._loop_target(t)

    visit_AsyncFor = visit_For  # noqa: N815

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._loop_target(node.optional_vars)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for k, v in zip(node.keys, node.values, strict=True):
            key = const_str(k) if k is not None else None
            if key is not None:
                self.keys.setdefault(key, []).append(v)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        # (every call of the module comes here: the common paths first, children pushed
        # inline in `generic_visit`'s order: keywords, arguments, then the callee)
        func = node.func
        name: str | None = None
        if isinstance(func, ast.Attribute):
            name = func.attr
            found = self.method_calls.get(name)
            if found is None:
                self.method_calls[name] = [node]
            else:
                found.append(node)
            owner = func.value
            if name in ("append", "extend") and isinstance(owner, ast.Name) and node.args:
                self.grown.setdefault(owner.id, []).append(node.args[0])
            last: str | None = name
        elif isinstance(func, ast.Name):
            self.calls.setdefault(func.id, []).append(node)
            last = func.id
        else:
            last = getattr(func, "id", None)
        if last not in _NAMESPACE_CALLS and name != "add_argument" and name != "set_defaults":
            push, scope = self._work.append, self._current
            for kw in reversed(node.keywords):
                push((kw, node, scope))
            for arg in reversed(node.args):
                if type(arg) not in _LEAVES:
                    push((arg, node, scope))
            if type(func) not in _LEAVES:
                push((func, node, scope))
            return
        qual = None
        if last in _NAMESPACE_CALLS:
            qual = self.ctx.qualname(func)
            self.asked.append((func, qual))
        if name == "add_argument":
            self._argparse_option(node)
        elif name == "set_defaults" or qual in ("argparse.Namespace", "types.SimpleNamespace"):
            for kw in node.keywords:
                if kw.arg:
                    self.attrs.setdefault(kw.arg, []).append(kw.value)
        elif qual == "builtins.dict":
            for kw in node.keywords:
                if kw.arg:
                    self.keys.setdefault(kw.arg, []).append(kw.value)
        self.generic_visit(node)

    def _argparse_option(self, node: ast.Call) -> None:
        flags = [s for s in (const_str(a) for a in node.args) if s]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        dest = const_str(kw["dest"]) if "dest" in kw else None
        if dest is None:
            longs = [f for f in flags if f.startswith("--")]
            chosen = longs[0] if longs else (flags[0] if flags else "")
            dest = chosen.lstrip("-").replace("-", "_") or None
        if dest is None:
            return
        if "default" in kw:
            self.attrs.setdefault(dest, []).append(kw["default"])
        else:
            self.attrs.setdefault(dest, [])
        choices = kw.get("choices")
        if isinstance(choices, (ast.List, ast.Tuple, ast.Set)):
            self.choices.setdefault(dest, []).extend(choices.elts)


def merge(ctx: Context, parts: list[Bindings]) -> Bindings:
    """The bindings of `ctx.tree` from those of runs of its top-level statements, in order
    (`Bindings.run(tree, body)`): exactly what one run over the tree gives, since that run
    visits the statements one after the other and only appends to what it records. The
    parts' own tables are shared, not copied: nobody changes bindings once made."""
    out = Bindings(ctx)
    out.parts = parts
    module_id = id(ctx.tree)
    names = out.names
    module = names.setdefault(module_id, {})
    out.nodes[ast.Name] = []  # first, as a visit records them
    out.nodes[ast.Attribute] = []
    # (one table at a time over every part: a document has a part per top-level chunk,
    # and most parts leave most tables empty)
    for part in parts:
        for scope_id, bound in part.names.items():
            if scope_id == module_id:
                for name, values in bound.items():
                    have = module.get(name)
                    if have is None:
                        module[name] = list(values)
                    else:
                        have.extend(values)
            else:
                names[scope_id] = bound
    for mapping in ("params", "returns", "init_of", "local_imports", "scope_of", "parents"):
        update = getattr(out, mapping).update
        for part in parts:
            found = getattr(part, mapping)
            if found:
                update(found)
    methods, asked = out.methods, out.asked
    for part in parts:
        if part.methods:
            methods |= part.methods
        if part.asked:
            asked += part.asked
    tables: list[dict[Any, list[Any]]] = [
        out.attrs,
        out.keys,
        out.choices,
        out.functions,
        out.calls,
        out.method_calls,
        out.grown,
        out.nodes,
    ]
    for table, name in zip(tables, _LISTS, strict=True):
        for part in parts:
            found = getattr(part, name)
            if not found:
                continue
            for key, values in found.items():
                have = table.get(key)
                if have is None:
                    table[key] = list(values)
                else:
                    have.extend(values)
    return out


#: the tables of lists `merge` joins part by part
_LISTS = ("attrs", "keys", "choices", "functions", "calls", "method_calls", "grown", "nodes")
#: `remerge` joins again the entries of at most this many parts gone or new
_REMERGE_AT_MOST = 8
#: the tables keyed by node ids (each key belongs to one part)
_BY_NODE = ("params", "returns", "init_of", "local_imports", "scope_of", "parents")


def remerge(ctx: Context, last: Bindings, parts: list[Bindings]) -> Bindings | None:
    """`merge(ctx, parts)`, made by changing `last` (what `merge` or `remerge` gave for the
    previous list of parts of the same tree, held by nobody else now) in place: the parts
    gone are taken out and the new ones put in. An edit replaces a chunk or two of a
    document, and joining every part again costs a pass over the whole module's tables.
    Every list gets the same values in the same order as `merge` gives. None (and `last`
    left as it was) when the parts kept are not in the same order or many changed."""
    old = last.parts
    old_ids = {id(p) for p in old}
    new_ids = {id(p) for p in parts}
    if [id(p) for p in old if id(p) in new_ids] != [id(p) for p in parts if id(p) in old_ids]:
        return None
    gone = [p for p in old if id(p) not in new_ids]
    added = [p for p in parts if id(p) not in old_ids]
    if len(gone) + len(added) > _REMERGE_AT_MOST:
        return None  # each table entry they touch is joined again over every part
    out = last
    out.ctx, out.parts = ctx, parts
    module_id = id(ctx.tree)
    # node-keyed tables: a key belongs to one part (the parts gone are still alive, so no
    # id of theirs is reused by a new part's node)
    names = out.names
    for p in gone:
        for scope_id in p.names:
            if scope_id != module_id:
                names.pop(scope_id, None)
    for p in added:
        for scope_id, bound in p.names.items():
            if scope_id != module_id:
                names[scope_id] = bound
    module = names.setdefault(module_id, {})
    touched = {n for p in (*gone, *added) for n in p.names.get(module_id, ())}
    if touched:
        _rejoin(module, [p.names.get(module_id, {}) for p in parts], touched)
    for mapping in _BY_NODE:
        table: dict[Any, Any] = getattr(out, mapping)
        for p in gone:
            for k in getattr(p, mapping):
                table.pop(k, None)
        for p in added:
            table.update(getattr(p, mapping))
    for p in gone:
        out.methods -= p.methods
    for p in added:
        out.methods |= p.methods
    out.asked = [a for p in parts for a in p.asked]
    for name in _LISTS:
        keys = {k for p in (*gone, *added) for k in getattr(p, name)}
        if keys:
            _rejoin(getattr(out, name), [getattr(p, name) for p in parts], keys)
    return out


def _rejoin(table: dict[Any, list[Any]], tables: list[dict[Any, Any]], keys: set[Any]) -> None:
    """`table[k]` for each of `keys` joined again from `tables` in order (as `merge` does:
    present when a table has it, even empty)."""
    for k in keys:
        values: list[Any] = []
        extend = values.extend
        present = False
        for t in tables:
            got = t.get(k)
            if got is not None:
                extend(got)
                present = True
        if present:
            table[k] = values
        else:
            table.pop(k, None)


_PARALLEL = frozenset({"itertools.product", "builtins.zip"})


def _parallel_iterables(b: Bindings, target: ast.expr, iterable: ast.expr) -> list[ast.expr] | None:
    """The iterable each name of a tuple target takes its elements from, when the loop runs
    over `itertools.product(a, b, ...)` or `zip(a, b, ...)` with one argument per name."""
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(iterable, ast.Call):
        return None
    func = iterable.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if last not in ("product", "zip") or iterable.keywords:
        return None
    args = iterable.args
    if len(args) != len(target.elts) or any(isinstance(a, ast.Starred) for a in args):
        return None
    qual = b.ctx.qualname(func)
    b.asked.append((func, qual))  # a chunk's bindings are reused only while this holds
    return list(args) if qual in _PARALLEL else None


_FUNCTION_KINDS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
#: node type -> the `visit_<type>` method doing its bookkeeping (which queues its children)
_HANDLERS: dict[type[ast.AST], Callable[[Bindings, Any], None]] = {
    kind: getattr(Bindings, f"visit_{kind.__name__}")
    for kind in (
        ast.ClassDef,
        ast.Import,
        ast.ImportFrom,
        ast.Return,
        ast.Assign,
        ast.AnnAssign,
        ast.AugAssign,
        ast.NamedExpr,
        ast.For,
        ast.AsyncFor,
        ast.comprehension,
        ast.withitem,
        ast.Dict,
        ast.Call,
    )
}
_LEAVES = frozenset(
    {ast.Constant, type(None), str, int}
    | {t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.expr_context)}
    | {
        t
        for t in vars(ast).values()
        if isinstance(t, type) and issubclass(t, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop))
    }
)
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type, last first (children are pushed on a stack)."""
    found = _FIELD_CACHE.get(kind)
    if found is None:
        found = _FIELD_CACHE[kind] = tuple(reversed(getattr(kind, "_fields", ())))
    return found


def const_str(node: ast.AST | None) -> str | None:
    """The value of a str literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None
