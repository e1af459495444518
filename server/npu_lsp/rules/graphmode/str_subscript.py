"""MS184: subscripting a str in compiled code: through a name of the global (or closure)
namespace under STRICT, or with an index known only at run time."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, bound_names
from npu_lsp.rules.graphmode.unsupported_python_call import container_type
from npu_lsp.rules.graphmode.values import instances

#: standard-library module constants that are strs (`from string import digits`)
_STR_CONSTANTS: frozenset[str] = frozenset(
    json.loads(Path(__file__).with_name("ms_str_constants.json").read_text(encoding="utf-8"))["strs"]
)


@rule(code="MS184", name="str-subscript", severity="error", family="graphmode")
class StrSubscript(GraphRule):
    """## What it does
    Flags reading a str by subscript in compiled code when MindSpore 2.10 cannot:
    - under STRICT, `NAME[i]` where `NAME` is also a name of the module (a module-level
      str such as `CHARS = "-0123456789"`, a str imported from another module, or any
      module-level name a local str of the same name shadows) or a str variable of an
      enclosing function (a closure), whatever the index: a constant, a slice, a loop
      variable, a tensor;
    - at both levels, any other str (a literal, a local, `self.chars`, a class attribute, a
      dict value, a `jit` argument) indexed by a Python int known only at run time:
      `int(t)`, `t.item()`, the variable of a `range(int(t))` loop (not in a function that
      handles host data, `asnumpy`/`tolist`/numpy: LAX interprets such an index);
    - under STRICT, such a str indexed by a Tensor (`s[idx[1]]`) or sliced with a run-time
      bound (`self.chars[:int(t)]`).

    ## Why is this bad?
    MindSpore reads `NAME[i]` for a name it finds in the function's global (or closure)
    namespace as the method call `NAME.__getitem__(i)`; a String has no such attribute in
    the graph, so STRICT stops with `AttributeError: In JIT strict mode, cannot get
    attributes __getitem__ or the String object has no attribute: '__getitem__'` even for
    `CHARS[2]` (LAX hands the call to the Python interpreter and compiles it). The same str
    read through another name (`chars = CHARS; chars[2]`), `self.chars[2]`, `string.digits[2]`
    or a default argument compiles. Other strs are indexed while compiling
    (`string_getitem`), which needs a constant index: `RuntimeError: string_getitem requires
    the input to be a string and an integer, but got -0123456789 and ValueAny` at both levels.
    A Tensor index or a run-time slice bound falls back to a Python script, which STRICT
    refuses (`When handling script '__py_exec_index0_getitem__(...)' in graph mode, the
    inputs should be constant`).

    ## Example
    ```python
    CHARS = "-0123456789"

    class Decode(nn.Cell):
        def construct(self, idx):
            return CHARS[int(idx[0])]
    ```

    ## Use instead
    Return the index and look the character up in Python:
    ```python
    class Decode(nn.Cell):
        def construct(self, idx):
            return idx[0]

    text = CHARS[int(Decode()(idx))]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, sections 1 (rejected at every level: the run-time index) and 2 (rejected
      only under STRICT: the namespace name, the Tensor index, the run-time slice bound).
    - Measured on MindSpore 2.10 with the heldout13b probes `strindex_*` and `ss_*`
      (tests/npu_lsp/fixtures/written/heldout13b/probes): module-level, imported, shadowed,
      closure and helper-read strs under STRICT beside accepted neighbours (an alias, a module
      attribute, a default argument, a class attribute, a dict value, a tuple of strs, a dead
      branch); `int(t)`, `.item()` and `range(int(t))` indexes at both levels; a Tensor index
      and a run-time slice bound under STRICT; `int(t.asnumpy()[0])` and `t.tolist()[0]`
      indexes compile under LAX.
    """

    nodes = (ast.Subscript,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.Subscript
        scope = ctx.scope
        if scope is None or type(node.ctx) is not ast.Load:
            return
        value = node.value
        if type(value) is ast.Name and _namespace_name(value.id, ctx):
            # read as NAME.__getitem__(...): refused under STRICT, interpreted under LAX
            if scope.strict and _namespace_str(value, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT `{value.id}[...]` is read as `{value.id}.__getitem__(...)` because `{value.id}` is a name of the module (or of an enclosing function), and a str has no such attribute in the graph (MindSpore: In JIT strict mode, cannot get attributes __getitem__ or the String object has no attribute: '__getitem__'); bind it to a local first (`chars = {value.id}`) or keep it on `self`",
                )
            return
        index = node.slice
        if (type(index) is ast.Constant or type(index) is ast.Tuple):
            return  # the common cases (a str takes no tuple), answered without any lookup
        if isinstance(index, ast.Slice):
            if scope.strict and _dynamic_bound(index, ctx) and _is_str(value, ctx):
                yield ctx.diagnostic(
                    self,
                    node,
                    f"under STRICT the str `{ctx.segment(value)}` cannot be sliced with a bound known only at run time: MindSpore hands the slice to the Python interpreter, which STRICT refuses; slice with constants",
                )
            return
        kind = analyzer(ctx).kind(index)
        if kind == Kind.VAR and not _host_data(ctx) and _is_str(value, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"the str `{ctx.segment(value)}` cannot be indexed by `{ctx.segment(index)}`, a Python int known only at run time: MindSpore picks characters while compiling (string_getitem requires the input to be a string and an integer, but got ... and ValueAny); return the index and look the character up in Python",
            )
        elif kind == Kind.TENSOR and scope.strict and _is_str(value, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"under STRICT the str `{ctx.segment(value)}` cannot be indexed by the Tensor `{ctx.segment(index)}`: MindSpore hands the read to the Python interpreter, which STRICT refuses; return the index and look the character up in Python",
            )


#: words of host data in a compiled function: an index computed from numpy values is a
#: Python object LAX hands to the interpreter with the read (`s[int(t.asnumpy()[0])]`,
#: `s[t.tolist()[0]]` compile there; STRICT refuses the host call itself)
_HOST_WORDS = ("asnumpy", "tolist", "numpy", "np.")


def _host_data(ctx: Context) -> bool:
    """Does the compiled function's text mention host data (once per function)?"""
    func = ctx.function
    key = ("ms184-host", id(func))
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        start, end = getattr(func, "lineno", 1), getattr(func, "end_lineno", None)
        text = "\n".join(ctx.lines[start - 1 : end])
        hit = ctx.cache[key] = any(w in text for w in _HOST_WORDS)
    return hit


def _dynamic_bound(index: ast.Slice, ctx: Context) -> bool:
    """Is a bound or the step of the slice a Tensor or a run-time Python number?"""
    a = analyzer(ctx)
    return any(
        b is not None and not isinstance(b, ast.Constant) and a.kind(b).dynamic
        for b in (index.lower, index.upper, index.step)
    )


def _is_str(e: ast.expr, ctx: Context) -> bool:
    """Is `e` known to be a str in the compiled function?"""
    return container_type(e, ctx) == "str" or isinstance(values(ctx).of(e), av.Str) or _class_str(e, ctx)


def _class_str(e: ast.expr, ctx: Context) -> bool:
    """`self.X` / `Owner.X` where the owning class's body binds `X` once to a str literal and
    no `obj.X = ...` anywhere in the file rebinds it (a class attribute)."""
    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name)):
        return False
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None or e.value.id not in ("self", cls.name) or instances(ctx).attr_stores(e.attr) != []:
        return False
    binds = [
        st.value for st in cls.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == e.attr for t in st.targets)
    ]
    return len(binds) == 1 and isinstance(binds[0], ast.Constant) and isinstance(binds[0].value, str)


def _enclosing(ctx: Context) -> list[ast.AST]:
    """The functions whose variables the compiled function sees as closure variables,
    innermost first: the functions above it (`ctx.parent`) whose body holds it, through
    classes (a method of a class defined in a function sees that function's variables); a
    function whose defaults, decorators or annotations hold it is not one (they are
    evaluated outside it). Once per function (`ctx.cache`)."""
    func = ctx.function
    if func is None:
        return []
    key = ("ms184-enclosing", id(func))
    hit: list[ast.AST] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = [] if _top_level(func, ctx) else _closures_of(func, ctx)
    return hit


def _closures_of(func: ast.AST, ctx: Context) -> list[ast.AST]:
    out: list[ast.AST] = []
    node: ast.AST | None = func
    # a lambda: up through expressions (lambdas whose body holds it) to its statement
    while node is not None and not isinstance(node, _STATEMENT_LIKE):
        parent = ctx.parent(node)
        if isinstance(parent, ast.Lambda) and node is parent.body:
            out.append(parent)
        node = parent
    # then through the statement skeleton: every function above is one whose body holds it
    # (a `def` reached from a lambda in its defaults or decorators is not: not appended)
    while node is not None:
        node = ctx.statement_parent(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(node)
    return out


_STATEMENT_LIKE = (ast.stmt, ast.excepthandler, ast.match_case)


def _top_level(func: ast.AST, ctx: Context) -> bool:
    """Is `func` a module-level function or a method of a module-level class (nothing
    encloses it), told from the columns without a walk of the module?"""
    if getattr(func, "col_offset", 0) == 0:
        return True
    owner = ctx.parent(func)
    return isinstance(owner, ast.ClassDef) and owner.col_offset == 0


def _namespace_name(name: str, ctx: Context) -> bool:
    """Is `name` one MindSpore looks up in the function's global or closure namespace
    (a module-level name, whether or not a local shadows it, or a variable of an enclosing
    function the compiled function does not bind itself)?"""
    if name in ctx.module_bindings():
        return True
    func = ctx.function
    if func is None or name in bound_names(func, ctx):
        return False
    return any(name in bound_names(f, ctx) for f in _enclosing(ctx))


def _namespace_str(e: ast.Name, ctx: Context) -> bool:
    """Is the name `e` (of the module or closure namespace) a str where it is read?"""
    func = ctx.function
    if func is not None and e.id in bound_names(func, ctx):
        return _is_str(e, ctx)  # a local str of the module name's spelling
    for f in _enclosing(ctx):
        if e.id in bound_names(f, ctx):
            return _bound_to_str(e.id, f, ctx)
    binds = ctx.module_bindings().get(e.id, [])
    if len(binds) != 1:
        return False
    st = binds[0]
    if isinstance(st, ast.ImportFrom) and st.module and st.level == 0:
        alias = next(a for a in st.names if (a.asname or a.name) == e.id)
        return f"{st.module}.{alias.name}" in _STR_CONSTANTS
    return isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and _module_str(st.value, ctx)


def _module_str(e: ast.expr, ctx: Context) -> bool:
    """Is the module-level expression `e` a str (a literal, or a str built from literals)?"""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (str, bytes))
    return container_type(e, ctx) == "str" and not any(isinstance(n, ast.Name) and not _builtin_or_module(n, ctx) for n in ast.walk(e))


def _builtin_or_module(n: ast.Name, ctx: Context) -> bool:
    q = ctx.qualname(n) or ""
    return q.startswith("builtins.") or q.partition(".")[0] in ("os", "posixpath", "string")


def _bound_to_str(name: str, func: ast.AST, ctx: Context) -> bool:
    """Is `name` a str in the enclosing function `func`: bound once to a str there, or a
    parameter every call of `func` in the module gives a str literal?"""
    bound = analyzer(ctx).single_assignment(name, func)
    if bound is not None:
        return _module_str(bound, ctx)
    args = getattr(func, "args", None)
    fname = getattr(func, "name", None)
    if not isinstance(args, ast.arguments) or fname is None:
        return False
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if name not in params:
        return False
    pos = params.index(name)
    given: list[ast.expr] = []
    for call in _calls_named(fname, ctx):
        kw = next((k.value for k in call.keywords if k.arg == name), None)
        arg = kw if kw is not None else call.args[pos] if pos < len(call.args) else None
        if arg is None:
            return False
        given.append(arg)
    return bool(given) and all(isinstance(g, ast.Constant) and isinstance(g.value, str) for g in given)


def _calls_named(name: str, ctx: Context) -> list[ast.Call]:
    """The calls `name(...)` of the file. A name its text spells once (the `def` line) is
    called nowhere; else every such call, from one walk of the file for all names
    (`ctx.cache`), not one per question."""
    counts = ctx.text_words()
    if counts is not None and counts.get(name, 0) <= 1:
        return []
    index: dict[str, list[ast.Call]] | None = ctx.cache.get("ms184-calls-by-name")
    if index is None:
        index = ctx.cache["ms184-calls-by-name"] = {}
        for n in ast.walk(ctx.tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
                index.setdefault(n.func.id, []).append(n)
    return index.get(name, [])
