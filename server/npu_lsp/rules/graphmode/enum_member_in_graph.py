"""MS192: enum members in compiled code: an int / str / float enum's member is a plain scalar there, a
plain enum's member cannot be the right side of `is`, and an enum class cannot be iterated."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule

#: enum bases whose members MindSpore converts to a scalar of the graph, with the name of the
#: scalar type its messages use (a builtin mixin, `class R(str, Enum)`, counts too)
_SCALAR_ENUMS = {"enum.IntEnum": "Int", "enum.IntFlag": "Int", "enum.StrEnum": "String"}
#: builtin mixins whose enum members MindSpore converts to that scalar (measured: int, str, float)
_SCALAR_MIXINS = {"builtins.int": "Int", "builtins.str": "String", "builtins.float": "Float"}
#: enum bases whose members stay Python objects in a graph
_OBJECT_ENUMS = frozenset({"enum.Enum", "enum.Flag"})
#: member attributes measured to fail on the Int a member becomes
_MEMBER_ATTRS = frozenset({"value", "name"})


@rule(code="MS192", name="enum-member-in-graph", severity="error", family="graphmode")
class EnumMemberInGraph(GraphRule):
    """## What it does
    Flags three uses of `enum` members in compiled code: `.value` or `.name` of a member of an
    `IntEnum` / `IntFlag` / `StrEnum` or of an enum with a `str`, `int` or `float` mixin
    (`Tok.BOS.value`, `self.pad_id.value` after `self.pad_id = Tok.PAD`,
    `LossReduction.MEAN.value` with `class LossReduction(str, Enum)`), `is` / `is not` with a member of a plain `Enum` on the right
    (`if self.mode is Mode.EVAL:`), and iterating an enum class itself (`for s in Scale:`,
    `[s.value for s in Scale]`, `list(Scale)`; any enum kind).

    ## Why is this bad?
    MindSpore 2.10 converts an int enum's member to the integer it is (a str or float
    enum's member to the string or float it is), so the member has no attributes left:
    `AttributeError: 'Int' object has no attribute 'value'` (`'String' object ...`,
    `'Float' object ...`). A plain
    enum's member stays a Python object, and the graph's `is` takes only Int, Bool, String,
    None and Type on its right: `TypeError: For syntax like 'a is b', b supports Int, Bool,
    String, None and Type, but got PythonObject`. An enum class is a type to the graph, which
    cannot iterate it: `TypeError: 'typetype' object is not iterable`. All at every syntax
    level; PyNative runs the code. `enumerate(Scale)`, `len(Scale)`,
    `Scale.__members__.values()`, a tuple of members, or `list(Scale)` built in `__init__`
    and iterated from `self` compile. The member itself (`x + Tok.BOS`, `x[Tok.BOS]`), `==` between members, and
    `.value` / `.name` of a plain enum's member compile.

    ## Example
    ```python
    def construct(self, ids):
        if self.mode is Mode.EVAL:
            return ids
        return ops.fill(ids.dtype, ids.shape, Tok.PAD.value)
    ```

    ## Use instead
    ```python
    def construct(self, ids):
        if self.mode == Mode.EVAL:
            return ids
        return ops.fill(ids.dtype, ids.shape, int(Tok.PAD))
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level). Measured on MindSpore 2.10 with
      written/famc probes `en_*` (IntEnum `.value` / `.name` on the class and through
      `self`, `is` / `is not` against an `Enum` member rejected at LAX and STRICT; `==`,
      indexing with an IntEnum member and a plain member's `.value` / `.name` compile).
    - Str / float enums: written/heldout36c case `loss_enum_reduction_values` (MONAI's
      `LossReduction(str, Enum)`) and probes `fix36e_en_*`: `.value` / `.name` of a member of
      a `(str, Enum)`, a `StrEnum` or a `(float, Enum)`, in `construct`, a helper, an
      `@ms.jit` function and through `self`, are rejected at LAX and STRICT ("'String'
      object has no attribute 'value'"); the member itself compared with a string, its str
      methods (`.upper()`), `.value` read in `__init__` and `.value` under a folded-away
      branch compile.
    - Iterating the class: written/heldout26b case `cfg_enum_members_loop_construct` and
      probes `fix26b_en_*` (`for` over an Enum / IntEnum class in `construct` and in a helper
      it calls, a comprehension over it, `list(Scale)`: rejected at LAX and STRICT; the
      forms listed above compile).
    """

    nodes = (ast.Attribute, ast.Compare, ast.For, ast.comprehension, ast.Call)

    def applies(self, ctx: Context) -> bool:
        return bool(enum_classes(ctx)) or bool(_all_enum_classes(ctx))

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        t = type(node)
        if t is ast.For or t is ast.comprehension or t is ast.Call:
            yield from self._iterated_class(node, ctx)
            return
        classes = enum_classes(ctx)
        if not classes:
            return
        if isinstance(node, ast.Attribute):
            if node.attr in _MEMBER_ATTRS and isinstance(node.ctx, ast.Load):
                member = enum_member_of(node.value, classes, ctx)
                if member is not None and classes[member[0]] != "object":
                    spelled = ctx.segment(node.value)
                    yield ctx.diagnostic(self, node, _scalar_member_message(spelled, member[0], classes[member[0]], node.attr))
            return
        assert isinstance(node, ast.Compare)
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.Is, ast.IsNot)):
                member = enum_member_of(right, classes, ctx)
                if member is not None and classes[member[0]] == "object":
                    spelled = "is not" if isinstance(op, ast.IsNot) else "is"
                    yield ctx.diagnostic(
                        self,
                        node,
                        f"`{spelled}` with the enum member `{ctx.segment(right)}` on its right: compiled code compares "
                        f"with `is` only Int, Bool, String, None and Type; use `==`",
                    )
                    return


    def _iterated_class(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        """`for s in Scale:`, a comprehension over `Scale`, `list(Scale)`: Scale an enum class."""
        if isinstance(node, ast.Call):
            if len(node.args) != 1 or node.keywords or ctx.qualname(node.func) != "builtins.list":
                return
            it = node.args[0]
        else:
            it = node.iter  # type: ignore[attr-defined]
        if not (type(it) is ast.Name and it.id in _all_enum_classes(ctx)):
            return
        if class_named(it.id, ctx) is None or analyzer(ctx).kind(it) != Kind.CONST:
            return  # rebound, or a local of that name
        yield ctx.diagnostic(
            self,
            node if isinstance(node, ast.Call) else it,
            f"`{it.id}` is an enum class, which compiled code cannot iterate (MindSpore: 'typetype' object is not "
            f"iterable); iterate a tuple of its members or values built in `__init__` (`self.scales = tuple({it.id})`) "
            f"or written out (`({it.id}.A, {it.id}.B)`)",
        )


def _all_enum_classes(ctx: Context) -> frozenset[str]:
    """Module-level classes of the file with an `enum` base of any kind (StrEnum, Flag...)."""
    hit = ctx.cache.get("MS192.all")
    if isinstance(hit, frozenset):
        return hit
    out: set[str] = set()
    if ctx.mentions("Enum") or ctx.mentions("Flag"):
        for st in ctx.tree.body:
            if isinstance(st, ast.ClassDef) and any((ctx.qualname(b) or "").startswith("enum.") for b in st.bases):
                out.add(st.name)
    found = ctx.cache["MS192.all"] = frozenset(out)
    return found


def enum_classes(ctx: Context) -> dict[str, str]:
    """Module-level enum classes of the file: name -> the graph scalar its members
    become ("Int", "String", "Float") or "object"."""
    hit = ctx.cache.get("MS192")
    if isinstance(hit, dict):
        return hit
    out: dict[str, str] = {}
    if ctx.mentions("Enum") or ctx.mentions("Flag"):  # (from the word index: no scan of the text)
        for st in ctx.tree.body:
            if isinstance(st, ast.ClassDef):
                bases = {ctx.qualname(b) or "" for b in st.bases}
                scalar = _scalar_kind(bases)
                if scalar is not None:
                    out[st.name] = scalar
                elif bases & _OBJECT_ENUMS and not any(b.startswith("builtins.") for b in bases):
                    out[st.name] = "object"
    ctx.cache["MS192"] = out
    return out


def _scalar_kind(bases: set[str]) -> str | None:
    """The graph scalar ("Int", "String", "Float") an enum class with these bases turns its members
    into, or None when they stay Python objects."""
    for b in bases:
        if b in _SCALAR_ENUMS:
            return _SCALAR_ENUMS[b]
    if bases & _OBJECT_ENUMS:
        for b in bases:
            if b in _SCALAR_MIXINS:
                return _SCALAR_MIXINS[b]
    return None


#: the Python type a graph scalar stands for, for the messages
_PYTHON_OF = {"Int": "int", "String": "str", "Float": "float"}


def _scalar_member_message(spelled: str, cls: str, scalar: str, attr: str) -> str:
    py = _PYTHON_OF[scalar]
    return (
        f"`{spelled}` is a member of the {py} enum `{cls}`, which compiled code sees as a plain {py} "
        f"(MindSpore: '{scalar}' object has no attribute '{attr}'): use the member itself, `{py}(...)` of it, "
        f"or read `.{attr}` in `__init__`"
    )


def enum_member_of(e: ast.expr, classes: dict[str, str], ctx: Context) -> tuple[str, str] | None:
    """(enum class, member) for `Cls.MEMBER`, or `self.attr` that `__init__` binds only to one."""
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in classes:
        cls = class_named(e.value.id, ctx)
        if cls is not None and e.attr in _members(cls):
            return e.value.id, e.attr
        return None
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        values = _self_values(e.attr, ctx)
        if len(values) == 1:
            return enum_member_of(values[0], classes, ctx)
    return None


def class_named(name: str, ctx: Context) -> ast.ClassDef | None:
    binds = ctx.module_bindings().get(name, [])
    return binds[0] if len(binds) == 1 and isinstance(binds[0], ast.ClassDef) else None


def _members(cls: ast.ClassDef) -> set[str]:
    return {
        t.id
        for st in cls.body
        if isinstance(st, ast.Assign)
        for t in st.targets
        if isinstance(t, ast.Name) and not t.id.startswith("_")
    }


def _self_values(attr: str, ctx: Context) -> list[ast.expr]:
    """The values the enclosing class's methods assign to `self.<attr>` (any method: one
    binding only counts)."""
    cls = analyzer(ctx).owner_class(ctx.function)
    if cls is None:
        return []
    out: list[ast.expr] = []
    for n in ast.walk(cls):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr == attr
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    out.append(n.value if n.value is not None and not isinstance(n, ast.AugAssign) else t)
    return out
