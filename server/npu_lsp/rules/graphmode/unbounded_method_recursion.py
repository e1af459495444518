"""MS143: a Cell method calling itself through `self` under a tensor-dependent condition, and a
`while True` loop left only under a tensor condition that changes a compile-time constant each
round: both are unrolled until MindSpore's call-depth limit."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.flow import Analyzer, analyzer, python_number
from npu_lsp.rules.graphmode.helpers import GraphRule, returns_in

#: A guard is the branch statement (or expression) whose tensor-dependent test decides
#: whether the recursive call runs.
_Guard = ast.If | ast.While | ast.IfExp

#: what `check` compares a call's name with (a method of the class)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@rule(code="MS143", name="unbounded-method-recursion", severity="error", family="graphmode")
class UnboundedMethodRecursion(GraphRule):
    """## What it does
    Flags a method of a compiled Cell (including `construct`) that calls itself through
    `self.<method>(...)` when whether the call happens depends on a tensor's value: the call
    sits in a branch of a tensor-dependent `if`, `while` or conditional expression, or follows
    an `if` on a tensor that returns early. A module-level function recursing the same way is
    fine, and so is recursion whose depth is decided by Python constants.

    Also flags a `while True:` loop whose every exit (`break` or `return`) sits under a
    tensor-dependent `if` and whose body changes a compile-time constant on every round:
    a Python number stepped by a constant (`steps += 1`, `total = total + 1.0`), or a list or
    tuple grown (`hist.append(x)`, `seen = seen + (x,)`).

    ## Why is this bad?
    Both paths of a tensor-dependent branch are compiled. A module-level function is
    compiled once as a recursive graph, but every `self.<method>` call is expanded again, so
    the compiler unrolls the recursion until MindSpore 2.10 stops with `RuntimeError: Exceed
    function call depth limit 1000` on the condition's line, at every syntax level (older
    versions said `There isn't any branch that can be evaluated.`).

    A `while True:` loop is unrolled as well: each round is a new graph specialised on the
    constants it carries, and a round that sees the same values as the one before closes the
    loop. A counter or a growing list never repeats, so the unrolling runs into the same
    limit (measured on 2.10: `Exceed function call depth limit 1000` at both levels). The
    same loop carrying only tensors, a counter bumped under a tensor `if`, a Python number
    grown by a tensor, or with a Python exit of its own (`if i > 100: break`) compiles.

    ## Example
    ```python
    class Net(nn.Cell):
        def grow(self, x):
            if x.sum() > 100:
                return x
            return self.grow(x * 2)

        def construct(self, x):
            return self.grow(x)
    ```

    ## Use instead
    Loop with `while` on the tensor condition (or recurse in a module-level function):
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            while x.sum() <= 100:
                x = x * 2
            return x
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: unbounded data-dependent recursion.
    - ms210 corpus: doc_faq_endless_recursion, orig_recursion_method_countdown (rejected);
      orig_recursion_function_doubling, orig_recursion_tensor_depth (accepted).
    - Written set `domains` (`gnn_khop_until_converged`) and its `whiletrue_*` probes.
    """

    nodes = (ast.Call, ast.While)
    callee = (ast.Attribute,)  # of the calls, `self.<method>(...)` only

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if type(node) is ast.While:
            return self._endless_loop(node, ctx)
        assert type(node) is ast.Call
        f, func = node.func, ctx.function
        if (
            type(f) is not ast.Attribute
            or f.attr != getattr(func, "name", None)  # (a class has a name: tested next)
            or not isinstance(func, _DEFS)
        ):
            return ()  # `_is_self_call`'s first tests, without a call per call
        if not _is_self_call(node, func, ctx):
            return ()
        return self._check(node, ctx)

    def wants_call(self, callee: type[ast.AST], called: str, receiver: str) -> bool:
        # `_is_self_call`'s shape: `<name>.<method>(...)` (the name is the first parameter)
        return callee is ast.Attribute and (receiver == "self" or receiver == "name")

    def file_calls(self, ctx: Context) -> frozenset[str] | None:
        # a call of the function it is in: the names of the module's functions and of its
        # classes' methods, when no other `def` is written anywhere (every `def` word of
        # the text is one of theirs)
        names: list[str] = []
        for st in ctx.tree.body:
            if isinstance(st, _DEFS):
                names.append(st.name)
            elif type(st) is ast.ClassDef:
                names.extend(m.name for m in st.body if type(m) is ast.FunctionDef or type(m) is ast.AsyncFunctionDef)
        # invariant: every `def` / `async def` statement of the tree is spelled by a `def`
        # word of `ctx.text`, so the count is at least the file's functions, and equals the
        # module-level functions and methods only when nothing deeper is defined
        # (test_definition_word_counts.py)
        counts = ctx.text_words()
        if counts is None or counts.get("def", 0) != len(names):
            return None
        return frozenset(names)

    def _check(self, node: ast.Call, ctx: Context) -> Iterable[Diagnostic]:
        func = ctx.function
        assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        guard = _dynamic_guard(node, func, ctx, analyzer(ctx))
        if guard is None:
            return
        where = guard.test if isinstance(guard, ast.IfExp) else ctx.head_span(guard)
        yield ctx.diagnostic(
            self,
            where,
            f"`{func.name}` calls itself through `self` under this tensor-dependent condition; "
            "MindSpore compiles both paths and unrolls the recursion until it exceeds its "
            "call-depth limit",
        )

    def _endless_loop(self, loop: ast.While, ctx: Context) -> Iterable[Diagnostic]:
        test = loop.test
        if not (isinstance(test, ast.Constant) and test.value) or loop.orelse:
            return  # cheap: almost every `while` has a real condition
        exits = _loop_exits(loop)
        if not exits:
            return  # no way out at all: not this rule's business
        stepped = _stepped_constant(loop, ctx)
        if stepped is None:
            return
        a = analyzer(ctx)
        for ex in exits:
            if not _under_dynamic_if(ex, loop, ctx, a):
                return  # a Python exit bounds the unrolling
        yield ctx.diagnostic(
            self,
            ctx.head_span(loop),
            f"this `while True` is left only under a tensor condition and changes the compile-time value `{stepped}` every round; "
            "MindSpore unrolls it round by round until it exceeds its call-depth limit (step a tensor, or add a Python bound)",
        )


def _loop_exits(loop: ast.While) -> list[ast.stmt]:
    """The `break`s and `return`s that leave `loop` (not those of an inner loop or function)."""
    out: list[ast.stmt] = []
    todo: list[ast.AST] = list(loop.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Break, ast.Return)):
            out.append(n)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.While)):
            todo.extend(n.orelse)
            todo.extend(r for r in ast.walk(n) if isinstance(r, ast.Return) and r is not n)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt))
    return out


def _under_dynamic_if(st: ast.stmt, loop: ast.While, ctx: Context, a: Analyzer) -> bool:
    """Is `st` inside an `if` (within `loop`) whose test depends on a tensor's value?"""
    node: ast.AST = st
    while node is not loop:
        parent = ctx.parent(node)
        if parent is None:
            return False
        if isinstance(parent, ast.If) and node is not parent.test and a.kind(parent.test).dynamic:
            return True
        node = parent
    return False


_GROWERS = frozenset({"append", "extend", "insert"})


def _stepped_constant(loop: ast.While, ctx: Context) -> str | None:
    """A name the loop body changes on every round to a new compile-time value, directly in
    its body (not under a branch): `n += 1` / `n = n + 1.0` for a name bound to a Python
    number before the loop, `seq.append(...)` for a list, `seq = seq + (...,)` for a tuple."""
    before = _bound_before(loop, ctx)
    for st in loop.body:
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
            name, step = st.target.id, st.value
            kind = before.get(name)
            if kind == "number" and python_number(step):
                return name
            if kind == "tuple" and isinstance(st.op, ast.Add) and isinstance(step, ast.Tuple):
                return name
        elif (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and isinstance(st.value, ast.BinOp)
            and isinstance(st.value.left, ast.Name)
            and st.value.left.id == st.targets[0].id
        ):
            name, step = st.targets[0].id, st.value.right
            kind = before.get(name)
            if kind == "number" and python_number(step):
                return name
            if kind == "tuple" and isinstance(st.value.op, ast.Add) and isinstance(step, ast.Tuple):
                return name
        elif (
            isinstance(st, ast.Expr)
            and isinstance(st.value, ast.Call)
            and isinstance(st.value.func, ast.Attribute)
            and st.value.func.attr in _GROWERS
            and isinstance(st.value.func.value, ast.Name)
            and before.get(st.value.func.value.id) == "list"
        ):
            return st.value.func.value.id
    return None


def _bound_before(loop: ast.While, ctx: Context) -> dict[str, str]:
    """Names bound right before `loop` in its own block to a number, a list or a tuple
    literal (the last binding wins; any other binding forgets the name)."""
    _parent, block, index = block_of(loop, ctx)
    out: dict[str, str] = {}
    for st in block[: max(index, 0)]:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            v = st.value
            name = st.targets[0].id
            if python_number(v):
                out[name] = "number"
            elif isinstance(v, ast.List) or (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "list" and not v.args):
                out[name] = "list"
            elif isinstance(v, ast.Tuple):
                out[name] = "tuple"
            else:
                out.pop(name, None)
        else:
            for n in ast.walk(st):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out.pop(n.id, None)
    return out


def _is_self_call(call: ast.Call, func: ast.AST | None, ctx: Context) -> bool:
    """Is `call` the method `func` calling itself as `self.<its name>(...)`? Cheap tests
    first: this runs for every call in compiled code."""
    f = call.func
    if not (
        type(f) is ast.Attribute
        and type(f.value) is ast.Name
        and isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
        and f.attr == func.name
    ):
        return False
    params = func.args.posonlyargs + func.args.args
    # `self` is the first parameter of a method defined directly in the class body
    return (
        bool(params) and f.value.id == params[0].arg and isinstance(ctx.parent(func), ast.ClassDef)
    )


def _dynamic_guard(call: ast.Call, func: ast.AST, ctx: Context, a: Analyzer) -> _Guard | None:
    """The innermost tensor-dependent condition deciding whether `call` runs, if any: an
    enclosing `if` / `while` / conditional expression (the call in a branch, not in the
    test), or an earlier `if` in an enclosing block that returns from one of its branches
    (MindSpore compiles what follows it as the other branch)."""
    node: ast.AST = call
    while node is not func:
        parent = ctx.parent(node)
        if parent is None:
            return None
        if isinstance(node, ast.stmt):
            _parent, block, index = block_of(node, ctx)
            for st in reversed(block[:index]):
                if (
                    isinstance(st, ast.If)
                    and (returns_in(st.body) or returns_in(st.orelse))
                    and a.kind(st.test).dynamic
                ):
                    return st
        if (
            isinstance(parent, ast.If | ast.While | ast.IfExp)
            and node is not parent.test
            and a.kind(parent.test).dynamic
        ):
            return parent
        node = parent
    return None
