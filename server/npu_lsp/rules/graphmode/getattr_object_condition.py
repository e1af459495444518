"""MS260: an object whose class defines `__getattr__` (an `edict` config) read in compiled
code, then read again in the condition of a following `if`: MindSpore fails to compile."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import constructed
from npu_lsp.rules.graphmode.control import block_of
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: bases a config class may have besides classes of the file: a Cell defines `__getattr__`
#: of its own, which is not what was measured
_PLAIN_BASES = frozenset({"dict", "object"})


@rule(code="MS260", name="getattr-object-read-before-condition", severity="error", family="graphmode")
class GetattrObjectReadBeforeCondition(GraphRule):
    """## What it does
    Flags, in compiled code, the condition of an `if` statement or a conditional expression
    that reads an attribute of an object whose class (in this file) defines `__getattr__`
    (the model zoo's `edict` config: `class edict(dict)` with `def __getattr__(self, name):
    return self[name]` or `__getattr__ = dict.__getitem__`), when a statement just before it,
    in the same block, already read an attribute of that same object (`self.config`, a local
    bound to it, or a module-level config in an `@ms.jit` function).

    ## Why is this bad?
    MindSpore resolves such an attribute through the class's `__getattr__` while compiling;
    after one read, a second one in the condition of a branch fails at LAX and STRICT with
    `RuntimeError: Forward orig_node to different func_graph, old_node: ... getattr ...`
    (a class that is not a dict fails there too). Each read alone compiles, and so does the
    condition read first, or a read inside the branch only. PyNative runs the code.

    ## Example
    ```python
    class edict(dict):
        def __getattr__(self, name):
            return self[name]

    class Head(nn.Cell):
        def __init__(self, config):
            super().__init__()
            self.config = config

        def construct(self, x):
            out = x * self.config.scale
            if self.config.use_bias_shift:
                out = out + 1.0
            return out
    ```

    ## Use instead
    Copy the values to attributes of the Cell in `__init__` (`self.scale = config.scale`,
    `self.use_bias_shift = config.use_bias_shift`), or read them by key
    (`self.config["use_bias_shift"]`), which compiles.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level).
    - Measured on MindSpore 2.10, written/heldout39c case `cfg_edict_attribute_read_in_construct`
      and probes `fix39d_ed_*`: a read (tensor arithmetic, Python arithmetic, through a local
      `c = self.config`, of the attribute the condition reads or another) followed by an
      `if` or a conditional expression on an attribute fails at both levels, for a method
      `__getattr__`, `__getattr__ = dict.__getitem__`, a plain class with `__getattr__`, a
      flag True or False, in `construct` and in an `@ms.jit` function over a module-level
      config. Compiled: one read, two reads without a condition, the condition first, the
      read only inside the branch, subscripts (`self.config["scale"]`), a plain class or a
      dataclass without `__getattr__`.
    """

    nodes = (ast.If, ast.IfExp)
    words = ("__getattr__",)  # most files define none: the rule is left out of their walk

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert isinstance(node, (ast.If, ast.IfExp))
        fn = ctx.function
        if fn is None:
            return
        for read in _attribute_reads(node.test):
            owner = _getattr_owner(read.value, fn, ctx)
            if owner is None:
                continue
            key, cls = owner
            earlier = _earlier_read(node, key, fn, ctx)
            if earlier is None:
                continue
            yield ctx.diagnostic(
                self,
                read,
                f"`{ctx.segment(read)}` is read through `{cls}.__getattr__` in this condition after "
                f"`{ctx.segment(earlier)}` (line {earlier.lineno}): MindSpore fails to compile it (Forward orig_node "
                "to different func_graph); copy the values to attributes in `__init__` or read them by key",
            )
            return


def _attribute_reads(e: ast.expr) -> list[ast.Attribute]:
    """The attribute reads `o.<name>` in `e` (outside lambdas and comprehensions)."""
    out: list[ast.Attribute] = []
    todo: list[ast.AST] = [e]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _earlier_read(node: ast.If | ast.IfExp, key: str, fn: ast.AST, ctx: Context) -> ast.Attribute | None:
    """A read of an attribute of the object `key` in a simple statement before the one
    holding `node`, in the same block."""
    stmt: ast.AST | None = node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = ctx.parent(stmt)
    if stmt is None:
        return None
    _, block, index = block_of(stmt, ctx)
    if index < 0:
        return None
    for prev in block[:index]:
        if not isinstance(prev, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
            continue
        value = prev.value
        if value is None:
            continue
        for read in _attribute_reads(value):
            owner = _getattr_owner(read.value, fn, ctx)
            if owner is not None and owner[0] == key:
                return read
    return None


def _getattr_owner(e: ast.expr, fn: ast.AST, ctx: Context, depth: int = 0) -> tuple[str, str] | None:
    """(what object, its class) when `e` is an instance of a class of this file defining
    `__getattr__`: `self.<attr>` built from one, a local bound once to such a read, or a
    module-level name the function does not bind."""
    if depth > 3:
        return None
    a = analyzer(ctx)
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        cls = a.owner_class(fn)
        found = constructed.sources(cls, e.attr, ctx) if cls is not None else None
        if not found:
            return None
        names = {_getattr_class(constructed.built(v, where, ctx), ctx) for v, where in found}
        name = names.pop() if len(names) == 1 else None
        return (f"self.{e.attr}", name) if name is not None else None
    if not isinstance(e, ast.Name):
        return None
    if a.rebinds(e.id, fn):
        bound = a.single_assignment(e.id, fn)
        return _getattr_owner(bound, fn, ctx, depth + 1) if bound is not None else None
    args = fn.args if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
    if args is None or any(p.arg == e.id for p in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
        return None  # a parameter: what a caller passes
    name = _getattr_class(constructed.built(e, None, ctx), ctx)
    return (e.id, name) if name is not None else None


def _getattr_class(made: ast.expr | None, ctx: Context) -> str | None:
    """The name of the class of this file `made` (a call building it) instantiates, when
    that class, or a base of it in this file, defines `__getattr__` and it derives from
    nothing but `dict` / `object` and classes of this file."""
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Name)):
        return None
    classes = {c.name: c for c in ctx.tree.body if isinstance(c, ast.ClassDef)}
    cls = classes.get(made.func.id)
    return cls.name if cls is not None and _defines_getattr(cls, classes, 0) else None


def _defines_getattr(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], depth: int) -> bool:
    if depth > 4:
        return False
    own = any(
        (isinstance(st, ast.FunctionDef) and st.name == "__getattr__")
        or (isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__getattr__" for t in st.targets))
        for st in cls.body
    )
    inherited = False
    for b in cls.bases:
        if not isinstance(b, ast.Name):
            return False
        if b.id in _PLAIN_BASES:
            continue
        base = classes.get(b.id)
        if base is None or base is cls:
            return False
        inherited = inherited or _defines_getattr(base, classes, depth + 1)
    return own or inherited
