"""Portable module summaries: what cross-file scope resolution reads of a module, no tree.

A `ModuleInfo` built by `scope.summarize` points into its file's syntax tree (functions,
classes). Keeping that for every module of a repository keeps every tree alive, and a tree
cannot be sent between processes cheaply. `portable(info)` returns the same summary with
each function and class replaced by a *pruned copy*: the node itself (name, position,
decorators, bases) with only the parts of its body that resolution reads, that is the
calls (with their callee expression and position), `x = f(...)` assignments, nested
definitions and `return name` statements, in their original order and nesting. Everything
else (expressions without calls, control flow without calls, constants) is dropped.

Resolution over pruned copies gives the same graph scopes as over the trees: the scans
(`astutil.find_branches`, `scope._returned_function`) meet the same nodes in the same
order, because a subtree is dropped only when it holds none of them. The result pickles
small (it crosses process boundaries and goes into the cache).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from npu_lsp.astutil import BLOCK_FIELDS, FIELDS, fields
from npu_lsp.columns import LineColumns
from npu_lsp.scope import ClassInfo, FuncDef, ModuleInfo, multitype_overloads

_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_DEFINITIONS = _FUNCTIONS | {ast.ClassDef}
_SKIP = (ast.Name, ast.Constant)
_LOAD = ast.Load()
_EXPR, _TUPLE, _CALL = ast.Expr, ast.Tuple, ast.Call
_new = ast.AST.__new__


def _bag(items: list[Any]) -> ast.Expr:
    """A container for kept parts; scans visit its items as they would have visited them
    in the original statement (same list order)."""
    # made as `ast.Expr(value=ast.Tuple(elts=items, ctx=_LOAD))` would be (the same
    # attributes in the same order), without the constructor's checks: half the cost
    bag = _new(_EXPR)
    elts = _new(_TUPLE)
    elts.__dict__ = {"elts": items, "ctx": _LOAD}
    bag.__dict__ = {"value": elts}
    return bag


def _positioned(copy: Any, node: Any) -> Any:
    copy.lineno = node.lineno
    copy.col_offset = node.col_offset
    copy.end_lineno = node.end_lineno
    copy.end_col_offset = node.end_col_offset
    return copy


class _Pruner:
    """Copies definitions keeping what resolution reads. Statements keep their nesting
    and order (assignments are read in scan order, later ones winning); inside an
    expression only its calls are kept, each with its callee expression whole (a call in
    a callee, as in `f(x)(y)`, stays inside it, so calls sharing a position keep their
    order) and the calls of its arguments. One copy per original definition, so a nested
    function listed both in its parent's body and in `ModuleInfo.functions` stays one
    object (resolution tells functions apart by identity)."""

    def __init__(self, text: str | None = None, graphs: frozenset[str] = frozenset()) -> None:
        self.memo: dict[int, Any] = {}
        #: the module's `MultitypeFuncGraph`s with an overload: a call naming one as an
        #: argument keeps that name (`ops.partial(_opt, lr)` reaches `_opt`'s overload)
        self.graphs = graphs
        #: `_paren_marks` of the text the tree was parsed from (None: not known)
        self.marks = _paren_marks(text)

    def definition(self, original: FuncDef | ast.ClassDef) -> Any:
        node: Any = original  # fields differ by type; each is read where it exists
        key = id(node)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        t: Any = type(node)
        copy: Any = t.__new__(t)
        self.memo[key] = copy
        copy.name = node.name
        copy.decorator_list = node.decorator_list
        copy.body = self.block(node.body)
        if t is ast.ClassDef:
            copy.bases = node.bases
            copy.keywords = node.keywords
        else:
            # defaults and annotations: only their calls (a scan of the function meets them)
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            extra = [
                *args.defaults,
                *(d for d in args.kw_defaults if d is not None),
                *(a.annotation for a in every if a is not None and a.annotation is not None),
                *([node.returns] if node.returns is not None else []),
            ]
            # parameter names only: a parameter shadows a module-level name when calls are
            # followed (`def apply(net, x): return net(x)` calls what it is given)
            copy.args = _names_only(args) if every != [None, None] else _NO_ARGS
            found = self.calls(extra) if extra else []
            if found:
                copy.body = [_bag(found), *copy.body]
            copy.returns = None
            copy.type_comment = None
        if hasattr(node, "type_params"):
            copy.type_params = []
        return _positioned(copy, node)

    def block(self, body: list[ast.stmt]) -> list[Any]:
        out: list[Any] = []
        statement = self.statement
        for st in body:
            kept = statement(st)
            if kept is not None:
                out.append(kept)
        return out

    def statement(self, st: ast.AST) -> Any:
        t = type(st)
        if t in _DEFINITIONS:
            return self.definition(st)  # type: ignore[arg-type]
        if t is ast.Assign:
            value = st.value  # type: ignore[attr-defined]
            names: list[ast.expr] = [x for x in st.targets if type(x) is ast.Name]  # type: ignore[attr-defined]
            if names and type(value) is ast.Call:
                copy = ast.Assign(
                    targets=list(names), value=self.calls([value])[0], type_comment=None
                )
                others = [x for x in st.targets if type(x) is not ast.Name]  # type: ignore[attr-defined]
                rest = self.calls(others) if others else None
                return _positioned(copy, st) if not rest else _bag([copy, *rest])
        elif t is ast.Return:
            value = st.value  # type: ignore[attr-defined]
            if type(value) is ast.Name:
                return _positioned(ast.Return(value=value), st)
        spec = _SPECS.get(t) or _spec(t)
        if spec[0] and self.no_call(st):
            return None  # a simple statement without a call: nothing of it is kept
        items: list[Any] = []
        for name, kind in spec[1]:
            value = getattr(st, name, None)
            if kind == _BLOCK:
                for sub in value or ():  # statements, `except` clauses, `case`s
                    kept = self.statement(sub)
                    if kept is not None:
                        items.append(kept)
            elif type(value) is list:
                if value:
                    items.extend(self.calls([v for v in value if isinstance(v, ast.AST)]))
            elif isinstance(value, ast.AST):
                items.extend(self.calls([value]))
        return _bag(items) if items else None

    def no_call(self, st: ast.AST) -> bool:
        """Do the lines of `st` hold no `(` (so no call)? False when unknown."""
        marks = self.marks
        if marks is None:
            return False
        end = st.end_lineno  # type: ignore[attr-defined]
        return end is not None and end < len(marks) and marks[end] == marks[st.lineno - 1]  # type: ignore[attr-defined]

    def calls(self, exprs: list[Any]) -> list[Any]:
        """Copies of the outermost calls in `exprs`, in scan order."""
        out: list[Any] = []
        stack = list(reversed(exprs))
        pop = stack.pop
        push = stack.append
        call_t, attr_t, name_t, const_t = ast.Call, ast.Attribute, ast.Name, ast.Constant
        children_of = _CHILDREN
        while stack:
            node = pop()
            t = type(node)
            if t is call_t:
                keywords = node.keywords
                inner = [*node.args, *[k.value for k in keywords]] if keywords else node.args or None
                if inner:
                    for v in inner:  # plain names and constants hold no call
                        tv = type(v)
                        if tv is not name_t and tv is not const_t:
                            break
                    else:
                        inner = None
                kept = self.calls(inner) if inner else []
                if self.graphs and node.args:
                    graphs = self.graphs
                    kept.extend(a for a in node.args if type(a) is name_t and a.id in graphs)
                copy = _new(call_t)
                copy.__dict__ = {  # as `ast.Call(func=..., ...)` sets them, in this order
                    "func": node.func,
                    "args": kept,
                    "keywords": [],
                    "lineno": node.lineno,
                    "col_offset": node.col_offset,
                    "end_lineno": node.end_lineno,
                    "end_col_offset": node.end_col_offset,
                }
                out.append(copy)
                continue
            if t in _SKIP or (t is attr_t and type(node.value) is name_t):
                continue
            names = children_of.get(t)
            if names is None:
                names = children_of[t] = tuple(reversed(FIELDS.get(t) or fields(t)))
            # pushed last field first, each list's items last first: popped in scan order
            for name in names:
                value: Any = getattr(node, name, None)
                tv = type(value)
                if tv is list:
                    for v in reversed(value):
                        tv = type(v)
                        if tv is not name_t and tv is not const_t and isinstance(v, ast.AST):
                            push(v)
                elif tv is not name_t and tv is not const_t and isinstance(value, ast.AST):
                    push(value)
        return out


_BLOCK, _OTHER = 0, 1
#: statement type -> (simple: holds no statements, (field, kind) in field order)
_SPECS: dict[type, tuple[bool, tuple[tuple[str, int], ...]]] = {}
#: expression type -> its child-holding fields, last first
_CHILDREN: dict[type, tuple[str, ...]] = {}


def _spec(t: type) -> tuple[bool, tuple[tuple[str, int], ...]]:
    names = FIELDS.get(t) or fields(t)
    pairs = tuple((n, _BLOCK if n in BLOCK_FIELDS else _OTHER) for n in names)
    spec = _SPECS[t] = (all(k != _BLOCK for _n, k in pairs), pairs)
    return spec


def _paren_marks(text: str | None) -> list[int] | None:
    """marks[n]: how many of lines 1..n hold a `(` (None when lines cannot be told apart
    as the parser numbers them: a `\r` may end a line there)."""
    if text is None or "\r" in text:
        return None
    marks = [0]
    n = 0
    for line in text.split("\n"):
        if "(" in line:
            n += 1
        marks.append(n)
    return marks


_NO_ARGS = ast.arguments(
    posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
)


def _names_only(args: ast.arguments) -> ast.arguments:
    """`args` with its parameters' names and nothing else (no defaults, no annotations)."""

    def bare(a: ast.arg | None) -> ast.arg | None:
        return None if a is None else ast.arg(arg=a.arg)

    return ast.arguments(
        posonlyargs=[ast.arg(arg=a.arg) for a in args.posonlyargs],
        args=[ast.arg(arg=a.arg) for a in args.args],
        vararg=bare(args.vararg),
        kwonlyargs=[ast.arg(arg=a.arg) for a in args.kwonlyargs],
        kw_defaults=[],
        kwarg=bare(args.kwarg),
        defaults=[],
    )


def portable(info: ModuleInfo, text: str | None = None) -> ModuleInfo:
    """`info` with pruned copies instead of tree nodes (see the module docstring). With the
    file's `text` (the text its tree was parsed from), the column converter keeps only
    the lines of kept calls, and statements whose lines hold no `(` are dropped unread."""
    pr = _Pruner(text, frozenset(multitype_overloads(info)))
    functions = {name: pr.definition(fn) for name, fn in info.functions.items()}
    classes: dict[str, ClassInfo] = {}
    for name, cls in info.classes.items():
        node = pr.definition(cls.node)
        methods = {m: pr.definition(fn) for m, fn in cls.methods.items()}
        # (`init_assigns` holds the full tree's statements, for readers of that tree only)
        classes[name] = replace(
            cls,
            node=node,
            bases=list(cls.bases),
            methods=methods,
            attr_types=dict(cls.attr_types),
            init_assigns=None,
        )
    columns = info.columns
    if columns is not None and text is not None and not text.isascii():
        columns = LineColumns.restricted(
            text, _call_lines([*functions.values(), *classes.values()])
        )
    elif columns is not None:
        columns = LineColumns("")
    return replace(info, functions=functions, classes=classes, columns=columns)


def _call_lines(defs: list[Any]) -> list[int]:
    """Lines where kept calls start or end (the only positions resolution converts)."""
    lines: set[int] = set()
    for d in defs:
        for node in ast.walk(d.node if isinstance(d, ClassInfo) else d):
            if type(node) is ast.Call:
                lines.add(node.lineno)
                lines.add(node.end_lineno or node.lineno)
    return sorted(lines)
