"""Shared helpers for graph-mode rules: the base class and small AST questions."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from npu_lsp.astutil import source_statements, statements, statements_of
from npu_lsp.registry import Rule

if TYPE_CHECKING:
    from npu_lsp.engine import Context

RULES_MD = "../shared/reference/graphmode/RULES.md"
FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class GraphRule(Rule):
    """A rule that only applies inside graph scopes (the engine skips eager code)."""

    graph_only: ClassVar[bool] = True


def terminates(body: list[ast.stmt]) -> bool:
    """Does this block always leave (return / raise / break / continue) before falling through?"""
    for st in body:
        # (exact types: parsed statements are never of a subclass; two `isinstance`
        # calls per statement were most of this test's cost)
        t = type(st)
        if t in _LEAVING:
            return True
        if t is ast.If and st.orelse and terminates(st.body) and terminates(st.orelse):  # type: ignore[attr-defined]
            return True
    return False


_LEAVING = frozenset({ast.Return, ast.Raise, ast.Break, ast.Continue})


def leaves_loop(node: ast.If) -> bool:
    """Does the `if` hold a `break` or `continue` of the loop around it (on either side, also
    under a nested `if`)? MindSpore then compiles the `if` as a loop exit, not as a join of
    a list's two lengths, and measuring the list after the loop compiles under LAX (measured,
    written/heldout38b probes `fix39a_brk_*`: `if t: lst.append(c); break` (or `continue`),
    `else: break`, `if t: lst.append(c); if t2: break`, then `len(lst)` after the loop
    compile; the same `if` beside a separate `if t2: break` fails with "The pointer[seq_abs]
    is null")."""
    todo: list[ast.AST] = [*node.body, *node.orelse]
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Break or t is ast.Continue:
            return True
        if t in (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue  # their own `break`s leave their own loop
        todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, (ast.stmt, ast.excepthandler)))
    return False


def own_statements(body: list[ast.stmt], ctx: Context) -> list[ast.stmt]:
    """`astutil.source_statements(body)` once per block and run: the one list of a
    function's statements (source order, nested function and class bodies left out) that
    flow's binding index and, through `body_statements`, MS119's call candidates and
    joining `if`s and MS185's aliases read, instead of each walking the blocks again.
    (Worth it only for a body several readers ask about: the list costs about one walk.)
    Shared: read it, never change it."""
    return _source_statements(body, ctx)[0]


def body_statements(body: list[ast.stmt], ctx: Context) -> list[ast.stmt]:
    """`astutil.statements(body)` once per block and run (MS119, MS185, MS222): the
    `own_statements` list itself unless a `try` is among them (`statements` visits a
    `try`'s `else` and `finally` before its handlers). Shared: read it, never change it."""
    stmts, has_try = _source_statements(body, ctx)
    if not has_try:
        return stmts
    key = ("helpers.body_statements", id(body))
    hit: list[ast.stmt] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = statements(body)
    return hit


def _source_statements(body: list[ast.stmt], ctx: Context) -> tuple[list[ast.stmt], bool]:
    key = ("helpers.source_statements", id(body))
    hit: tuple[list[ast.stmt], bool] | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = source_statements(body)
    return hit


def returns_in(body: list[ast.stmt]) -> list[ast.Return]:
    """Return statements in `body`, not looking into nested functions or classes (in source
    order). `return` is a statement, so expressions are never scanned."""
    return statements_of(body, ast.Return)  # type: ignore[return-value]


def is_root_body(node: ast.AST, ctx: object) -> bool:
    """Is the node directly in the compiled root function (not in a nested def or lambda)?"""
    scope = getattr(ctx, "scope", None)
    return scope is not None and getattr(ctx, "function", None) is scope.function


def strict_output_items(node: ast.AST, ctx: object) -> list[ast.expr] | None:
    """The values a `return` of a STRICT graph's entry (`construct` or an `@ms.jit` function,
    not a helper it calls) gives back, one per element of a returned tuple or list display;
    None for any other `return`. What STRICT may output is judged per element."""
    scope = getattr(ctx, "scope", None)
    if (
        scope is None
        or not scope.strict
        or scope.kind not in ("construct", "jit")
        or getattr(ctx, "function", None) is not scope.function
    ):
        return None
    value = getattr(node, "value", None)
    if value is None:
        return None
    return list(value.elts) if isinstance(value, (ast.Tuple, ast.List)) else [value]


def own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of `func`, not those of functions, lambdas and classes nested in it (their
    names are their own); the nested definitions themselves are included."""
    # `ast.iter_child_nodes` written out (two generator layers per node otherwise): the
    # same children in the same order, contexts and operators included
    out: list[ast.AST] = []
    stack: list[ast.AST] = []
    node_t, list_t, stop = ast.AST, list, _OWN_STOP
    n = func
    while True:
        for name in n._fields:
            try:
                v = getattr(n, name)
            except AttributeError:
                continue
            if isinstance(v, node_t):
                stack.append(v)
            elif isinstance(v, list_t):
                stack.extend([x for x in v if isinstance(x, node_t)])
        while stack:
            n = stack.pop()
            out.append(n)
            if not isinstance(n, stop):
                break
        else:
            return out


_OWN_STOP = (*FUNCS, ast.ClassDef)


_SCOPES = (*FUNCS, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bound_names(func: ast.AST, ctx: Context, *, nested: bool = False) -> frozenset[str]:
    """The names `func` binds: its parameters (`*args`, `**kwargs` included), the targets
    it stores to, the functions and classes it defines, less the names it declares
    `global` or `nonlocal`. Nested functions, lambdas, classes and comprehensions bind
    their own names, so they are left out unless `nested` (then every store below `func`
    counts, and every such declaration). Once per function and run (`ctx.cache`)."""
    key = ("bound-names", id(func), nested)
    hit: frozenset[str] | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    names: set[str] = set()
    declared: set[str] = set()
    args = getattr(func, "args", None)
    if isinstance(args, ast.arguments):
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        names.update(a.arg for a in every if a is not None)
    body = getattr(func, "body", [])
    stack: list[ast.AST] = list(body) if isinstance(body, list) else [body]
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if type(n.ctx) is ast.Store:  # type: ignore[attr-defined]
                names.add(n.id)  # type: ignore[attr-defined]
            continue
        if t is ast.Global or t is ast.Nonlocal:
            declared.update(n.names)  # type: ignore[attr-defined]
            continue
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            names.add(n.name)  # type: ignore[attr-defined]
        if nested or not isinstance(n, _SCOPES):
            stack.extend(ast.iter_child_nodes(n))
    hit = ctx.cache[key] = frozenset(names - declared)
    return hit


def store_lines(func: ast.AST, ctx: Context) -> dict[str, list[int]]:
    """Name -> the lines where `func` itself stores to it (assignment and loop targets,
    not those of nested scopes; see `bound_names`), in no particular order. Cached."""
    key = ("store-lines", id(func))
    hit: dict[str, list[int]] | None = ctx.cache.get(key)
    if hit is not None:
        return hit
    hit = {}
    body = getattr(func, "body", [])
    stack: list[ast.AST] = list(body) if isinstance(body, list) else [body]
    while stack:
        n = stack.pop()
        if type(n) is ast.Name:
            if type(n.ctx) is ast.Store:
                hit.setdefault(n.id, []).append(n.lineno)
        elif not isinstance(n, _SCOPES):
            stack.extend(ast.iter_child_nodes(n))
    ctx.cache[key] = hit
    return hit


def file_mentions(ctx: Context, word: str) -> bool:
    """Does the file's text contain `word` (once per file and word)? A cheap test before
    resolving anything for a rule that needs the word to be written somewhere."""
    key = ("file-mentions", word)
    hit: bool | None = ctx.cache.get(key)
    if hit is None:
        hit = ctx.cache[key] = ctx.mentions(word)
    return hit


def inside_while(node: ast.AST, ctx: Context) -> bool:
    """Is `node` inside a `while` of the function being checked?"""
    p = ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, ast.While):
            return True
        p = ctx.parent(p)
    return False


def module_function(fname: str, ctx: Context) -> ast.FunctionDef | None:
    """The module-level `def fname` of the file (the first one), when compiled code reaches it."""
    functions: dict[str, ast.FunctionDef] | None = ctx.cache.get(_FUNCTIONS_KEY)
    if functions is None:  # one lookup table per file, not a scan of the module per call
        functions = {}
        for d in ctx.tree.body:
            if type(d) is ast.FunctionDef:
                functions.setdefault(d.name, d)
        ctx.cache[_FUNCTIONS_KEY] = functions
    fdef = functions.get(fname)
    return fdef if fdef is not None and ctx.scopes.scope_for(fdef) is not None else None


_FUNCTIONS_KEY = "helpers.module_functions"


def module_value_once(name: str, ctx: Context) -> ast.expr | None:
    """The value of `name = <value>`, when that is the only plain assignment to `name` at the
    module's top level (a module-level tensor or array a script builds once)."""
    values = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    ]
    return values[0] if len(values) == 1 else None


def quoted(node: ast.AST, ctx: Context) -> bool:
    """Does the text of `node`'s lines hold a quote? Without one it holds no str literal,
    so no str constant: a test on its text, before any walk of its nodes."""
    lines = ctx.lines[getattr(node, "lineno", 1) - 1 : getattr(node, "end_lineno", None) or len(ctx.lines)]
    text = "\n".join(lines)  # two searches in C, not a generator stepping through the lines
    return "'" in text or '"' in text


#: classes whose instances are tensors in compiled code (last dotted part of the name)
_TENSOR_CLASSES = frozenset({"Tensor", "Parameter", "StubTensor", "COOTensor", "CSRTensor", "RowTensor"})


def _isinstance_of(test: ast.expr, name: str) -> tuple[bool, bool] | None:
    """For `isinstance(name, T)` (possibly under `not`): (negated, T names a tensor class);
    None for any other test."""
    negated = False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        negated, test = True, test.operand
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
        and test.args[0].id == name
    ):
        return None
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = [k.attr if isinstance(k, ast.Attribute) else k.id if isinstance(k, ast.Name) else None for k in kinds]
    if None in names:
        return None
    return negated, any(n in _TENSOR_CLASSES for n in names)


def narrowed_off_tensor(name: str, node: ast.AST, ctx: Context) -> bool:
    """Is `node` on a side of an `isinstance` test that rules out a tensor in `name`? The
    body of `if isinstance(k, int):` (or `(int, float)`, `not isinstance(k, Tensor)`), the
    `else` of `if isinstance(k, Tensor):`. MindSpore folds `isinstance` while compiling, per
    call signature: when `k` is a tensor that side is not compiled at all, and when it is
    compiled `k` is not a tensor (measured: `if isinstance(k, int): k = ms.Tensor(k,
    ms.float32)` in a `construct` called with an int and with a Tensor compiles under STRICT;
    without the test, a Tensor argument is refused)."""
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            found = _isinstance_of(parent.test, name)
            if found is not None:
                negated, tensor_class = found
                in_body = child in parent.body if isinstance(parent, ast.If) else child is parent.body
                # the side where `name` cannot be a tensor
                if in_body == (negated == tensor_class):
                    return True
        child, parent = parent, ctx.parent(parent)
    return False


def builtin_sequence_call(e: ast.expr | None, ctx: Context) -> ast.Call | None:
    """`tuple(v)` / `list(v)` (the builtins) of one positional argument, else None."""
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Name)
        and e.func.id in ("tuple", "list")
        and len(e.args) == 1
        and not e.keywords
        and ctx.qualname(e.func) == f"builtins.{e.func.id}"
    ):
        return e
    return None


def called_only_at_top(cls: ast.ClassDef, ctx: Context) -> bool:
    """Is every instance of `cls` a module-level name that only module-level code reads, by
    calling it (the top cell of its own graph: `step(x, y)`)? MS154 measured (written/heldout36d probes
    `fix36d_pn3_*`, `fix36d_pn_*_direct`, `fix36d_pn2_*`): such a top cell compiles beside its
    optimizer's state of the same names (`clone(prefix="accum")` beside `nn.SGD`, `moments`
    beside `nn.Momentum`, a `global_step` Parameter in a `TrainOneStepCell` subclass), in
    GRAPH_MODE or the default mode; called from a jit function it fails ("its name '...'
    already exists")."""
    suffix = "." + cls.name
    names = {n for n, q in ctx.scopes.info.instances.items() if q == cls.name or q.endswith(suffix)}
    module_level: set[int] = set()
    for st in ctx.tree.body:
        if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        module_level.update(id(n) for n in ast.walk(st))
    built = [
        c for c in ast.walk(ctx.tree)
        if type(c) is ast.Call and type(c.func) is ast.Name and c.func.id == cls.name
    ]
    # `Net()(x)` at module level: built and called at once, the top cell too
    inline = [c for c in built if id(c) in module_level and type(up := ctx.parent(c)) is ast.Call and up.func is c]
    loads = [n for n in ast.walk(ctx.tree) if type(n) is ast.Name and n.id in names and type(n.ctx) is ast.Load]
    if not inline and not any(id(n) in module_level for n in loads):
        return False  # never called here
    for n in loads:
        if id(n) not in module_level:
            if not _local_in_function(n, ctx):
                return False  # read as the global inside a function (a jit function, a Cell)
            continue
        up = ctx.parent(n)
        # called (`step(x, y)`) or an attribute read (`obs.min_val`, `net.trainable_params()`);
        # handed to anything else (`Model(step)`, a list, another name) it may be compiled there
        if not ((type(up) is ast.Call and up.func is n) or (type(up) is ast.Attribute and up.value is n)):
            return False
    # no instance built elsewhere (`Outer(Step(...))`, `self.step = Step()`)
    return all(type(ctx.parent(c)) is ast.Assign and id(c) in module_level or any(c is i for i in inline) for c in built)


def _local_in_function(n: ast.Name, ctx: Context) -> bool:
    """Is the read `n` of a name the innermost function around it binds (a parameter or a
    store), not the module-level global?"""
    p = ctx.enclosing_function(n, through_classes=True)
    if p is None:
        return False
    a = p.args  # type: ignore[attr-defined]
    if n.id in {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}:
        return True
    return any(type(x) is ast.Name and x.id == n.id and type(x.ctx) is ast.Store for x in ast.walk(p))


def top_cell_construct(func: ast.AST, ctx: Context) -> bool:
    """Is `func` the `construct` of a module-level Cell class compiled as the top cell of its
    graph (GRAPH_MODE scope, `called_only_at_top`)?"""
    if type(func) is not ast.FunctionDef or func.name != "construct":
        return False
    scope = ctx.scopes.scope_for(func)
    owner = ctx.parent(func)
    if scope is None or scope.kind != "construct" or type(owner) is not ast.ClassDef or ctx.parent(owner) is not ctx.tree:
        return False
    return called_only_at_top(owner, ctx)


def device_choices(tree: ast.Module, ctx: Context) -> Iterator[ast.expr | None]:
    """The device each `ms.set_context(...)` / `ms.set_device(...)` call of the file gives:
    `device_target=`'s value, `set_device`'s first argument, None for a `set_context`
    without a device (in the order `ast.walk` meets them)."""
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        q = ctx.qualname(n.func) or ""
        if q == "mindspore.set_context":
            yield next((k.value for k in n.keywords if k.arg == "device_target"), None)
        elif q == "mindspore.set_device" and n.args:
            yield n.args[0]


def runs_on_cpu(ctx: Context) -> bool:
    """Does the script choose the CPU with a literal (`ms.set_device("CPU")`,
    `ms.set_context(device_target="CPU")`), and no other device? A script naming no device
    may run on Ascend, whose kernels and graph passes differ (MS257, MS248): not judged."""
    key = "helpers.runs_on_cpu"
    hit = ctx.cache.get(key)
    if hit is None:
        hit = False
        if ctx.mentions("CPU"):
            for given in device_choices(ctx.tree, ctx):
                if isinstance(given, ast.Constant) and given.value == "CPU":
                    hit = True
                elif given is not None:
                    hit = False
                    break  # another device chosen too: not judged
        ctx.cache[key] = hit
    return bool(hit)
