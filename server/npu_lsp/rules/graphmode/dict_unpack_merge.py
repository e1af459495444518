"""MS123: `{**a, **b}` dict unpacking in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import calls_table
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


def _dict_union(rule: GraphRule, node: ast.BinOp, ctx: Context) -> Iterable[Diagnostic]:
    """`d1 | d2`: measured (ms_calls.json, operation "|") to fail at both levels."""
    if not isinstance(node.op, ast.BitOr) or analyzer(ctx).type_class(node.left) != "dict":
        return
    verdict = calls_table.method("dict", "|", analyzer(ctx).kind(node.left).dynamic, ctx.scope.level if ctx.scope else "lax")
    if verdict is not None and not verdict.accepted:
        yield ctx.diagnostic(
            rule, node, f"merging dicts with `|` fails to compile in graph mode (MindSpore: {verdict.message})"
        )


def _kwargs_param(value: ast.expr, ctx: Context) -> bool:
    """Is `value` the function's own `**kwargs` parameter, never rebound?"""
    func = ctx.function
    args = getattr(func, "args", None)
    return (
        isinstance(value, ast.Name)
        and isinstance(args, ast.arguments)
        and args.kwarg is not None
        and value.id == args.kwarg.arg
        and not analyzer(ctx).rebinds(value.id, func)
    )


def _entry_kind(key: ast.expr | None, value: ast.expr, ctx: Context) -> Kind:
    """Kind of the values one entry of the display brings in: `**kwargs` brings what its
    call sites pass by keyword (`r(o, d, n_samples=16)`: constants)."""
    if key is None and _kwargs_param(value, ctx):
        return analyzer(ctx).keywords_kind(ctx.function)
    return analyzer(ctx).kind(value)


def _all_constant(node: ast.Dict, ctx: Context) -> bool:
    """Merging dicts of compile-time constants is folded correctly (measured on 2.10:
    `{**d, "f": 1.0}` with float values compiles; `{**DEFAULTS, **kwargs}` with constant
    keyword arguments, heldout16a `r2_nerf_render_kwargs_merge`); only run-time values are
    mis-evaluated."""
    return all(_entry_kind(k, v, ctx) == Kind.CONST for k, v in zip(node.keys, node.values, strict=True))


def _literal_mapping(value: ast.expr, ctx: Context) -> ast.Dict | None:
    """The dict display a name unpacked with `**` stands for: a local bound once, or a
    module-level name the function does not bind (`DEFAULTS = {...}`)."""
    if not isinstance(value, ast.Name):
        return None
    a = analyzer(ctx)
    bound = a.single_assignment(value.id, ctx.function)
    if bound is None and a.first_binding_line(value.id, ctx.function) is None:
        module = [
            st.value
            for st in getattr(ctx.tree, "body", [])
            if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in st.targets)
        ]
        bound = module[0] if len(module) == 1 else None
    if not isinstance(bound, ast.Dict) or None in bound.keys or _mutated(value.id, ctx):
        return None
    return bound


_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear"})


def _mutated(name: str, ctx: Context) -> bool:
    """Does the function store into `name[...]` or call a mutating dict method on it? Its
    display then no longer says which keys it holds."""
    for n in ast.walk(ctx.function) if ctx.function is not None else ():
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)):
            target = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
            target = n.func.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name:
            return True
    return False


def _constant_served(node: ast.Dict, ctx: Context) -> dict[object, bool]:
    """For each key the display is known to hold, does the value MindSpore gives `d[key]`
    come from a constant? MindSpore keeps the *first* value of a repeated key (measured,
    heldout16a probes `fb16_du_*`: `{**DEFAULTS, **kw}` reads DEFAULTS' values whatever `kw`
    passes), and a constant so served can be computed with even when later entries hold
    tensors (`{**DEFAULTS, **kw}` with a tensor keyword compiles). Keys past an unpacked
    mapping of unknown keys are not placed; `**kwargs` given only constants serves
    constants for every key not placed before it. Constants of a literal mapping are not
    trusted when the display's own values are run-time values (measured:
    `{**DEFAULTS, "t": x * 2}` then `cfg["t"] * cfg["scale"]` fails, "TupleGetItem evaluator
    index should be in range[-2, 2), but got 2"; `{**kwargs, "t": x * 2}` compiles)."""
    a = analyzer(ctx)
    own_dynamic = any(k is not None and a.kind(v) != Kind.CONST for k, v in zip(node.keys, node.values, strict=True))
    served: dict[object, bool] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is not None:
            if isinstance(key, ast.Constant):
                served.setdefault(key.value, a.kind(value) == Kind.CONST)
            continue
        shown = _literal_mapping(value, ctx)
        if shown is not None:
            for k, v in zip(shown.keys, shown.values, strict=True):
                if isinstance(k, ast.Constant):
                    served.setdefault(k.value, not own_dynamic and a.kind(v) == Kind.CONST)
            continue
        if _kwargs_param(value, ctx) and a.keywords_kind(ctx.function) == Kind.CONST:
            served.setdefault(_ANY_KEY, True)
        break
    return served


#: stands for every key not placed before a `**kwargs` of constants
_ANY_KEY = object()


def _unpacked_self_dict(node: ast.Dict, ctx: Context) -> ast.expr | None:
    """`**self.cfg` with `self.cfg` a dict display of `__init__`: measured (heldout16a probes
    `fb16_du_self_dict_*`), "The input of dict which need unpack must be dict, but got 10"
    at LAX and STRICT, even when nothing is computed with the result; `base = self.cfg`
    then `{**base}` compiles."""
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    if cls is None:
        return None
    for key, value in zip(node.keys, node.values, strict=True):
        if (
            key is None
            and isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "self"
        ):
            bound = a.self_values(cls).get(value.attr, [])
            if bound and all(isinstance(b, ast.Dict) for b in bound):
                return value
    return None


@rule(code="MS123", name="dict-unpack-merge", severity="error", family="graphmode")
class DictUnpackMerge(GraphRule):
    """## What it does
    Flags dict displays that unpack another mapping with `**` inside compiled code, when the
    merged values are computed at run time (tensors) and an unpacked value is then computed
    with (`d["a"] + d["b"]`, `d["a"] * 2`); dicts of constants merge correctly, and returning
    the dict or an unpacked value as it is compiles. A read is not flagged when the value
    MindSpore gives it is a constant: MindSpore keeps the *first* value of a repeated key, so
    in `{**DEFAULTS, **kwargs}` every key of a module-level `DEFAULTS` of constants reads
    DEFAULTS' value, and `**kwargs` brings the keyword arguments its call sites pass
    (constants in `net(x, n_samples=16)`). Also flags `{**self.cfg}`, a dict held on the Cell
    unpacked straight into a display, refused at both levels ("The input of dict which need
    unpack must be dict"); `base = self.cfg` then `{**base}` compiles.
    Also flags merging dicts with `|`, which MindSpore 2.10 rejects at every level (measured,
    `ms_calls.json`: "For operation 'bitwise_or' ... 'Dictionary' is not supported").

    ## Why is this bad?
    MindSpore mis-evaluates the display (it treats the unpacking like addition) and stops
    with `TypeError: For Operator[Add], input's type 'Tuple[...]' does not match expected
    type 'Tensor'.`, without pointing at a line.

    ## Example
    ```python
    def construct(self, x):
        d1 = {"a": x}
        d2 = {"b": x * 2}
        d = {**d1, **d2}
        return d["a"] + d["b"]
    ```

    ## Use instead
    ```python
    def construct(self, x):
        d = {"a": x, "b": x * 2}
        return d["a"] + d["b"]
    ```
    or build the merged dict with `d = d1.copy()` followed by `d.update(d2)`.
    Note that `{**DEFAULTS, **kwargs}` compiles but does not let `kwargs` override `DEFAULTS`
    in graph mode (measured: the first value of a key wins), so read overrides explicitly.

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: `{**d1, **d2}` (mis-evaluated).
    - Measured on MindSpore 2.10: written/spec probes `du_*`, heldout16a probes `fb16_du_*`.
    """

    nodes = (ast.Dict, ast.BinOp)
    words = ("|", "**")  # `a | b` (BitOr) or `{**a}` (a dict display unpacking)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: every binary operation of compiled code comes here
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, ast.BitOr):
                return ()
            return _dict_union(self, node, ctx)
        assert isinstance(node, ast.Dict)
        if not any(k is None for k in node.keys):
            return ()
        return self._unpacked(node, ctx)

    def _unpacked(self, node: ast.Dict, ctx: Context) -> Iterable[Diagnostic]:
        held = _unpacked_self_dict(node, ctx)
        if held is not None:
            yield ctx.diagnostic(
                self,
                held,
                f"`**{ctx.segment(held)}` unpacks a dict held on the Cell straight into a dict display, which graph mode refuses (MindSpore: The input of dict which need unpack must be dict); bind it to a local first (`base = {ctx.segment(held)}`)",
            )
            return
        if not _all_constant(node, ctx):
            read = _unpacked_value_computed_on(node, ctx)
            if read is not None:
                yield ctx.diagnostic(
                    self,
                    node,
                    f"`**` unpacking in a dict display is mis-compiled in graph mode: the values it unpacks come back wrapped in tuples, so `{ctx.segment(read)}` cannot be computed with (MindSpore: input's type 'Tuple[Tuple[Tensor...]]' does not match expected type 'Tensor')",
                )


#: parents in which an item read is computed with (not just passed on or returned)
_COMPUTING = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign, ast.Attribute, ast.Call)


def _unpacked_value_computed_on(node: ast.Dict, ctx: Context) -> ast.Subscript | None:
    """The first `d[k]` of the dict `d = {**a, ...}` whose key is not one of the display's
    own and whose value is computed with (an operand, a call argument, a method receiver).
    Measured on 2.10: `d["a"] + d["b"]`, `d["a"] * 2`, `{**a}["a"] + 1` fail at both levels;
    `return d["a"]`, `return d` and an operation on a key the display writes itself compile."""
    parent = ctx.parent(node)
    func = ctx.function
    if not (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and func is not None
    ):
        return None
    name = parent.targets[0].id
    own = {k.value for k in node.keys if isinstance(k, ast.Constant)}
    served = _constant_served(node, ctx)
    for n in ast.walk(func):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and not (isinstance(n.slice, ast.Constant) and n.slice.value in own)
            and not (isinstance(n.slice, ast.Constant) and served.get(n.slice.value, served.get(_ANY_KEY, False)))
        ):
            outer = ctx.parent(n)
            if isinstance(outer, _COMPUTING) and not (isinstance(outer, ast.Call) and outer.func is n):
                return n
    return None
