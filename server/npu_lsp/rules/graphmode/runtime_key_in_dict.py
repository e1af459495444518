"""MS254: a membership test MindSpore decides while compiling although its key is a run-time value."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.control import param_names
from npu_lsp.rules.graphmode.dict_keys import (
    fallback_key,
    module_bindings,
    module_dict,
    runtime_text,
    self_dict,
)
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule


@rule(code="MS254", name="runtime-key-in-dict", severity="warning", family="graphmode")
class RuntimeKeyInDict(GraphRule):
    """## What it does
    Warns about a membership test in compiled code that MindSpore answers while compiling,
    although the value tested is known only at run time:
    - `k in d` / `k not in d` on a dict (a display, a dict `__init__` keeps on `self`, a
      module-level dict) with `k` a number read from a run-time tensor (`int(idx[t])`,
      `x[0].item()`, `float(t)`), arithmetic on one with constants (`int(t) + 3`), an item
      of a constant sequence it picks (`NAMES[int(t)]`), or a tuple holding one;
    - `t in seq` / `t not in seq` with `t` a run-time tensor (`x[0]`, `x.argmax()`) and
      `seq` a list or tuple of numbers (a display, one on `self` or at module level).

    ## Why is this bad?
    MindSpore resolves a dict lookup while compiling (`in_dict`), and a key it does not
    know then is in no dict: `k in d` becomes the constant False (`k not in d` True) for
    every input. The program compiles, but `if k in self.table:` never takes its branch in
    graph mode (and the lookup under it is never compiled), where PyNative looks the value
    up: the two modes print different results. Likewise, the graph compares a tensor only
    with the tensor items of a list or tuple (`tensor_in_sequence`), so `t in (1, 2, 3)` is
    False whatever `t` holds, where PyNative compares the values.

    Not reported, because graph and PyNative agree: a tensor as a dict key (Python hashes a
    Tensor by identity, so PyNative's answer is False too), a Python number as the key
    (`int(x[0]) in (1, 2, 3)` is computed at run time, `InSequence`), a key the graph knows
    while compiling (a Python argument of the top-level Cell, a `for` variable over
    constants or a `range` of constants, `x.shape[0]`), `k in d.keys()` (a tuple of the
    keys), under LAX a key computed from a JIT Fallback value (`int(x.asnumpy()[0])`,
    `str(int(t))`: Python answers), a tensor in a tuple of tensors, an input of a compiled
    root that no call in the project shows to be a tensor (a `clip_type` flag).

    ## Example
    ```python
    def construct(self, logits):
        k = int(logits.argmax())
        out = 0
        if k in self.table:  # always False in graph mode
            out = 1
        return out
    ```

    ## Use instead
    Keep the keys in a tensor and compare there, or test a number against a tuple:
    ```python
    def construct(self, logits):
        k = int(logits.argmax())
        out = 0
        if k in self.keys:  # self.keys = tuple(self.table)
            out = 1
        return out
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md has no row for it (the program compiles; graph and PyNative results differ).
    - Measured on MindSpore 2.10 CPU by printing each program's result under PyNative, LAX
      and STRICT: written/heldout38c probes `fix39a_in_*` (graph False where PyNative prints
      True for `int(t)`, `.item()`, `float(t)`, `int(t) + 3`, `NAMES[int(t) - 1]`, a tuple
      key, on a dict on `self`, local, module-level or given to `@ms.jit`, `not in`; a tensor
      in a list or tuple of numbers, a display, on `self` or module-level; the same results
      for a Python argument, constant loop variables, `x.shape[0] - 1`, `d.keys()`, a tensor
      dict key, `int(t)` in a tuple, LAX's `int(x.asnumpy()[0])` and `str(int(t))`);
      written/heldout38c case `decode_dict_lookup_in_construct_idx_to_char` and probes
      `fix38c_dictin_*` (the branch is never compiled).
    - MindSpore's `in_impl.py` (`in_` on `Dictionary` is `F.in_dict`; on `Tensor, Tuple` /
      `Tensor, List` `tensor_in_sequence` compares tensor items only).
    """

    nodes = (ast.Compare,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # most comparisons are `<`, `==`...: dismissed on their shape, for the cost of a call
        assert type(node) is ast.Compare
        if len(node.ops) != 1 or type(node.ops[0]) not in (ast.In, ast.NotIn):
            return ()
        return self._check(node, ctx)

    def _check(self, node: ast.Compare, ctx: Context) -> Iterable[Diagnostic]:
        key, box = node.left, node.comparators[0]
        folded = type(node.ops[0]) is ast.NotIn  # the constant the graph answers
        test = ctx.segment(node)
        if _dict(box, ctx) and _runtime_number_key(key, ctx) and not _never_filled(box, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"`{test}` is decided while compiling: `{ctx.segment(key)}` is read from a run-time tensor and is "
                f"in no graph dict then, so MindSpore makes the test {folded} for every input (PyNative looks the "
                "value up); code under it runs as if the key were never there. Test a number against a tuple of "
                "the keys (`k in tuple(d)`) or compare tensors",
            )
            return
        if _runtime_tensor(key, ctx) and _number_sequence(box, ctx):
            yield ctx.diagnostic(
                self,
                node,
                f"`{test}` is decided while compiling: the graph compares the tensor `{ctx.segment(key)}` only with "
                f"tensor items, and `{ctx.segment(box)}` holds numbers, so MindSpore makes the test {folded} for "
                "every input (PyNative compares the values). Test a number (`int(t) in seq`) or compare tensors "
                "(`(t == Tensor(seq)).any()`)",
            )


def _runtime_tensor(key: ast.expr, ctx: Context) -> bool:
    """A tensor key; an input of the compiled function only when its callers pass a tensor,
    not by the guess the flow makes for an uncalled root's inputs (models/official PVNet's
    `ClipGradients.construct(grads, clip_type, clip_value)` tests `clip_type not in (0, 1)`,
    an int by its docstring, and no call in the project says otherwise)."""
    a = analyzer(ctx)
    if a.kind(key) != Kind.TENSOR:
        return False
    func = ctx.function
    if type(key) is ast.Name and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and key.id in param_names(func):
        return a.param_kind_seen(key.id, func) == Kind.TENSOR
    return True


def _dict(box: ast.expr, ctx: Context) -> bool:
    """A dict MS121 knows: a display, a local of type dict, one on `self` or at module level."""
    return (
        isinstance(box, ast.Dict)
        or analyzer(ctx).type_class(box) == "dict"
        or self_dict(box, ctx)
        or module_dict(box, ctx)
    )


def _runtime_number_key(key: ast.expr, ctx: Context) -> bool:
    """A run-time graph scalar (or a tuple holding one, the rest constants) the graph's
    `in_dict` cannot know: not a tensor (Python hashes those by identity: PyNative says False
    too), not text LAX formats in Python (`str(int(t))`, `f"{k}"`), not a JIT Fallback value."""
    a = analyzer(ctx)
    if type(key) is ast.Tuple:
        kinds = [a.kind(e) for e in key.elts]
        return Kind.VAR in kinds and all(k in (Kind.CONST, Kind.VAR) for k in kinds) and all(
            _runtime_number_key(e, ctx) for e, k in zip(key.elts, kinds, strict=True) if k == Kind.VAR
        )
    if a.kind(key) != Kind.VAR or fallback_key(key, ctx):
        return False
    shown = key
    if type(key) is ast.Name:
        bound = a.single_assignment(key.id, ctx.function)
        shown = bound if bound is not None else key
    # text built from a run-time number: LAX formats it in Python (measured, probe
    # `fix39a_in_dict_str_key`: PyNative and LAX agree; STRICT refuses `str()`)
    return not (runtime_text(shown, ctx) or isinstance(shown, ast.JoinedStr))


def _number_sequence(box: ast.expr, ctx: Context) -> bool:
    """A list or tuple display of numbers, or a name / `self` attribute bound only to one."""
    values: list[ast.expr | None]
    if isinstance(box, (ast.List, ast.Tuple)):
        values = [box]
    elif isinstance(box, ast.Name) and ctx.function is not None:
        a = analyzer(ctx)
        local = a.single_assignment(box.id, ctx.function)
        if local is not None:
            values = [local]
        elif a.first_binding_line(box.id, ctx.function) is None:
            values = module_bindings(box.id, ctx)
        else:
            return False
    elif isinstance(box, ast.Attribute) and isinstance(box.value, ast.Name) and box.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(box.attr, []) if cls is not None else []
    else:
        return False
    return bool(values) and all(_numbers_display(v) for v in values)


def _numbers_display(v: ast.expr | None) -> bool:
    return (
        isinstance(v, (ast.List, ast.Tuple))
        and bool(v.elts)
        and all(
            isinstance(e, ast.Constant) and type(e.value) in (int, float) for e in v.elts
        )
    )


#: methods that put items into a dict
_FILLING = frozenset({"update", "setdefault", "__setitem__", "fromkeys"})


def _never_filled(box: ast.expr, ctx: Context) -> bool:
    """An empty dict (`{}`, `dict()`, `OrderedDict()`) the file never stores into: PyNative
    answers False too, so graph and PyNative agree (written/heldout16b probe
    `ls17_od_in_int`: `int(ids[0]) in self.cache` with `self.cache = OrderedDict()`)."""
    a = analyzer(ctx)
    if isinstance(box, ast.Dict):
        return not box.keys
    if isinstance(box, ast.Attribute) and isinstance(box.value, ast.Name) and box.value.id == "self":
        cls = a.owner_class(ctx.function)
        values = a.self_values(cls).get(box.attr, []) if cls is not None else []
        attr: str | None = box.attr
    elif isinstance(box, ast.Name) and ctx.function is not None:
        local = a.single_assignment(box.id, ctx.function)
        values = [local] if local is not None else module_bindings(box.id, ctx)
        attr = None
    else:
        return False
    if not values or not all(_empty_dict(v) for v in values):
        return False
    name = box.attr if attr is not None else box.id  # type: ignore[union-attr]
    for n in ast.walk(ctx.tree):
        # (this walk runs only for a test about to be reported)
        stores = (type(n) is ast.Subscript and type(n.ctx) is ast.Store) or (type(n) is ast.Attribute and n.attr in _FILLING)
        held = n.value if stores else None  # type: ignore[attr-defined]
        if held is not None and (
            (type(held) is ast.Attribute and held.attr == name) or (type(held) is ast.Name and held.id == name)
        ):
            return False
    return True


def _empty_dict(v: ast.expr | None) -> bool:
    if isinstance(v, ast.Dict):
        return not v.keys
    return (
        isinstance(v, ast.Call)
        and not v.args
        and not v.keywords
        and isinstance(v.func, (ast.Name, ast.Attribute))
        and (v.func.id if isinstance(v.func, ast.Name) else v.func.attr) in ("dict", "OrderedDict")
    )

