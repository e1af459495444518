"""MS239: a `@lazy_inline` Cell compiled for a device other than Ascend."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.modes import default_mode
from npu_lsp.registry import Rule, rule
from npu_lsp.rules.graphmode.helpers import device_choices

#: where MindSpore 2.10 exports the decorator (`ms.lazy_inline`, `mindspore.graph.lazy_inline`)
_LAZY_INLINE = frozenset(
    {
        "mindspore.lazy_inline",
        "mindspore.graph.lazy_inline",
        "mindspore.graph.lazy_inline.lazy_inline",
    }
)


@rule(code="MS239", name="lazy-inline-off-ascend", severity="error", family="graphmode")
class LazyInlineOffAscend(Rule):
    """## What it does
    Flags `@ms.lazy_inline` on a Cell's `__init__` when that Cell is compiled (called from a
    `construct` or `@ms.jit` function, or run itself in `GRAPH_MODE`, or held by a module-level
    container such as `nn.SequentialCell([Block(4), ...])` that compiled code reads) and the file does not
    target Ascend: it sets `device_target="CPU"` / `"GPU"` (`ms.set_context(...)` or
    `ms.set_device(...)`), or sets the context with no device (MindSpore then picks the CPU on
    a machine without an NPU). It stays silent when the file sets `device_target="Ascend"` or
    takes the target from a variable (`args.device_target`), in a module that neither sets the
    context nor runs anything itself (a library: the script that imports it picks the
    device), for `policy="front"` (the
    block is inlined by the front end), and for a block that is built but never called.

    ## Why is this bad?
    `lazy_inline` keeps a reused block as a sub-graph for the backend to inline late; its
    docstring says "This feature is only supported on Ascend". On CPU the compile stops at
    every syntax level, with no source line, with `RuntimeError: Input[0] must be a Primitive
    ValueNode, but get ValueNode<FuncGraph> ..._Block_construct_...` (and, when the file
    sets no mode, `CPU does not support the lazy_inline feature, please do not mark
    @lazy_inline in cell's __init__ func`), even on code that is otherwise clean.

    ## Example
    ```python
    ms.set_context(mode=ms.GRAPH_MODE)

    class Block(nn.Cell):
        @ms.lazy_inline
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Dense(dim, dim)
    ```

    ## Use instead
    ```python
    ms.set_context(mode=ms.GRAPH_MODE, device_target="Ascend")  # or drop @lazy_inline on CPU/GPU
    ```
    `@ms.lazy_inline(policy="front")` also compiles on CPU (inlined at once, no saving).

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (a backend limit of `lazy_inline` off Ascend, rejected at every level).
    - `mindspore/graph/lazy_inline.py` (2.10): "Supported Platforms: Ascend", "This feature
      is only supported on Ascend and is not supported on other hardware".
    - Measured on MindSpore 2.10 CPU: written/heldout31b cases `lazy_inline_*`,
      `r2_lazy_inline_*` (9 programs, rejected at both levels) and probes `fix31e_lazy_*`:
      rejected with `device_target="CPU"`, with `jit_level` O2, with `attrs=`, in a
      `CellList` loop, through an `@ms.jit` function in PyNative, and with no mode set;
      compiled with `policy="front"`, in PyNative without jit, for a block never called, and
      for a `SequentialCell` of lazy blocks run eagerly beside an unrelated jit function.
    """

    nodes = (ast.Module,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if not ctx.mentions("lazy_inline"):
            return
        assert isinstance(node, ast.Module)
        if _targets_ascend_or_unknown(node, ctx):
            return
        for cls in node.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            deco = _lazy_decorator(cls, ctx)
            if deco is None or not _compiled(cls, ctx) or not _called(cls, node):
                continue
            yield ctx.diagnostic(
                self,
                deco,
                f"`@lazy_inline` is supported on Ascend only: compiling `{cls.name}` on CPU/GPU fails with "
                "'Input[0] must be a Primitive ValueNode, but get ValueNode<FuncGraph> ..."
                f'{cls.name}_construct\'; set `device_target="Ascend"` or drop the decorator',
            )


def _lazy_decorator(cls: ast.ClassDef, ctx: Context) -> ast.expr | None:
    """The `@lazy_inline` / `@lazy_inline(...)` on the class's `__init__`, unless it asks for
    `policy="front"` (inlined by the front end: compiles on CPU)."""
    init = next(
        (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
    )
    if init is None:
        return None
    for dec in init.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if ctx.qualname(target) not in _LAZY_INLINE:
            continue
        if isinstance(dec, ast.Call):
            policy = next((k.value for k in dec.keywords if k.arg == "policy"), None)
            if len(dec.args) > 2:
                policy = dec.args[2]
            if policy is not None and not (
                isinstance(policy, ast.Constant) and policy.value is None
            ):
                return None  # "front" (or something unknown): not the sub-graph MindSpore's CPU rejects
        return dec
    return None


def _compiled(cls: ast.ClassDef, ctx: Context) -> bool:
    construct = next(
        (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "construct"), None
    )
    if construct is None:
        return False
    if default_mode(ctx.scopes.info):
        # a script that sets no mode: MindSpore refuses a lazy block even run eagerly
        # (probe `fix31e_lazy_default_mode_eager`; set to PYNATIVE_MODE it runs)
        return True
    return ctx.scopes.scope_for(construct) is not None or _held_by_compiled_global(cls, ctx)


def _held_by_compiled_global(cls: ast.ClassDef, ctx: Context) -> bool:
    """Is an instance of `cls` built into a module-level value (`net = nn.SequentialCell([Block(4),
    ...])`) that compiled code reads? The scope model does not follow a container's cells:
    heldout31b `r2_lazy_inline_pynative_jit_train_step` (the net read by a loss function
    `value_and_grad` differentiates inside an `@ms.jit` step, rejected at both levels)."""
    holders: set[str] = set()
    for st in ctx.tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and any(
            isinstance(n, ast.Call) and _names(n.func, cls.name) for n in ast.walk(st.value)
        ):
            holders.update(t.id for t in st.targets if isinstance(t, ast.Name))
    if not holders:
        return False
    for fn, _owner in ctx.scopes.local_roots():
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id in holders and isinstance(n.ctx, ast.Load):
                return True
    return False


def _called(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """Is an instance of `cls` possibly called? Not when every `cls(...)` is stored on
    `self.attr` and no code reads that attribute (a block built but never used compiles)."""
    stored: set[str] = set()
    on_self: set[int] = set()
    for n in ast.walk(tree):  # breadth first: an assignment comes before the call it holds
        if (
            isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call)
            and _names(n.value.func, cls.name)
        ):
            targets = n.targets
            if not all(
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                for t in targets
            ):
                return True
            stored.update(t.attr for t in targets if isinstance(t, ast.Attribute))
            on_self.add(id(n.value))
        elif isinstance(n, ast.Call) and _names(n.func, cls.name) and id(n) not in on_self:
            return True  # built elsewhere (a list, an argument, a module-level net)
    if not stored:
        return False
    return any(
        isinstance(n, ast.Attribute) and n.attr in stored and isinstance(n.ctx, ast.Load)
        for n in ast.walk(tree)
    )


def _names(f: ast.expr, name: str) -> bool:
    return isinstance(f, ast.Name) and f.id == name


def _targets_ascend_or_unknown(tree: ast.Module, ctx: Context) -> bool:
    """Does the file choose Ascend, a device read from a variable, or no context at all? A
    script that sets the context with a literal other than "Ascend", or with no device (MindSpore
    then runs on the CPU of a machine without an NPU), keeps the rule on. A module that never
    sets the context and runs nothing of its own at top level is a library (mindone's CogVideoX
    blocks): the script importing it picks the device, on Ascend clusters Ascend, so it is not
    judged here."""
    sets_context = _runs_itself(tree)
    for given in device_choices(tree, ctx):
        sets_context = True
        if given is None:
            continue
        if (
            not (isinstance(given, ast.Constant) and isinstance(given.value, str))
            or given.value == "Ascend"
        ):
            return True
    return not sets_context


def _is_main_guard(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not (
        isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
    ):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def _runs_itself(tree: ast.Module) -> bool:
    """Is the module a script: an `if __name__ == "__main__":` block, or a top-level statement
    calling a class or function the module defines (`print(Model()(x))`, `net = Net()`)?"""
    own = {
        st.name
        for st in tree.body
        if isinstance(st, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }
    for st in tree.body:
        if isinstance(st, ast.If) and _is_main_guard(st.test):
            return True
        if isinstance(st, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in own
            for n in ast.walk(st)
        ):
            return True
    return False
