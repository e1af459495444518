"""MS226: (LAX) a tuple or list of tensors on `self` iterated and stored again in compiled code."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.astutil import node_key
from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.attribute_stores import self_stores
from npu_lsp.rules.graphmode.flow import analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes

#: calls whose arguments a comprehension iterates in step (`zip(self.acc, grads)`)
_ITERATORS = frozenset({"zip", "enumerate"})


@rule(code="MS226", name="self-sequence-rebuilt-in-graph", severity="error", family="graphmode")
class SelfSequenceRebuiltInGraph(GraphRule):
    """## What it does
    Under the default LAX syntax level, flags a comprehension or generator in compiled code
    (`construct`, a `@jit` method) that iterates a tuple or list of tensors held on `self`
    (`zip(self.acc, grads)`, `for a in self.acc`), when the same function also stores that
    attribute again (`self.acc = tuple(a + g for a, g in zip(self.acc, grads))`, or the
    comprehension kept in a local first) and `__init__` built it as a sequence of tensors
    of the parameters' shapes (`tuple(ops.zeros_like(p) for p in params)`, `[... for p in
    opt.parameters]`, a display of tensors). A loop appending to a list over the attribute
    counts too.

    ## Why is this bad?
    An attribute that compiled code re-binds is read back at LAX as a sequence of run-time
    length whose items all take the first item's shape; iterating it with items of
    different shapes (a weight and a bias) fails at the first call: `For 'SequenceAdd', the
    size of 'input_0 + input_1': {32} is not equal to the size of output: {48}` (a
    comprehension) or `For ListAppend, the list existing item abstract ... ` (an append
    loop). Measured with MindSpore 2.10 (CPU), written/heldout29a cases
    `accum_grads_tuple_reassigned_on_self`, `r2_accum_tuple_attr_*` and probes
    `fix29c_acc_*`: the same comprehension kept in a local and never stored on `self`, a
    comprehension over the arguments only (`tuple(g * 2 for g in grads)`) stored on
    `self`, `(self.acc[0] + grads[0], self.acc[1] + grads[1])` and items all of one shape
    compile. STRICT refuses the store itself (MS132).

    ## Example
    ```python
    class Accum(nn.Cell):
        def __init__(self, params):
            super().__init__()
            self.acc = tuple(ops.zeros_like(p) for p in params)

        def construct(self, grads):
            self.acc = tuple(a + g for a, g in zip(self.acc, grads))
            return self.acc[0]
    ```

    ## Use instead
    Keep the accumulators as Parameters and update them in place:
    ```python
    self.acc = ParameterTuple(params).clone(prefix="acc", init="zeros")
    ...
    for a, g in zip(self.acc, grads):
        ops.assign_add(a, g)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 2 (LAX runs stores on `self` as JIT Fallback; STRICT refuses them).
    - MindSpore 2.10, measured at LAX: written/heldout29a cases
      `accum_grads_tuple_reassigned_on_self`, `r2_accum_tuple_attr_reassign_listcomp_no_counter`,
      `r2_accum_tuple_attr_counter_single_call`, probes `fix29c_acc_*`; heldout14b
      `train_grad_accumulation_counter`, heldout19a `r2_gradaccum_self_grads_list_cell`.
    """

    nodes = (ast.FunctionDef,)
    words = ("in self.", "zip(self.", "enumerate(self.")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        assert type(node) is ast.FunctionDef
        if ctx.scope is None or ctx.scope.strict:
            return ()
        if not _keeps_sequences(node, ctx):
            return ()  # before the walk of the function's stores, which most functions pass
        stores = self_stores(node)
        if not stores:
            return ()
        seg = ctx.segment(node)  # the file's words say little: most constructs iterate no attribute
        if not any(w + a in seg for a in stores for w in ("in self.", "zip(self.", "enumerate(self.", ", self.")):
            return ()
        out: list[Diagnostic] = []
        for n in own_nodes(node):
            if type(n) in (ast.ListComp, ast.GeneratorExp):
                iters = [g.iter for g in n.generators]  # type: ignore[attr-defined]
            elif type(n) is ast.For and _appends(n):
                iters = [n.iter]
            else:
                continue
            for attr in _self_iterated(iters):
                if attr in stores and _init_tensor_sequence(node, attr, ctx):
                    out.append(
                        ctx.diagnostic(
                            self,
                            n,
                            f"`self.{attr}` is stored again in this function, so LAX reads it back as a sequence of run-time length whose items take the first item's shape; iterating it fails when its tensors differ in shape (For 'SequenceAdd', the size of ... is not equal to the size of output); keep the accumulators as Parameters (`ops.assign_add`)",
                        )
                    )
                    break
        return out


def _appends(loop: ast.For) -> bool:
    """Does the body of `loop` call `.append(...)`?"""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append"
        for st in loop.body
        for n in ast.walk(st)
    )


def _self_iterated(iters: list[ast.expr]) -> list[str]:
    """The `self.<attr>` a loop or comprehension iterates: the iterable itself, or an
    argument of `zip` / `enumerate`."""
    out: list[str] = []
    for it in iters:
        seqs = it.args if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in _ITERATORS else [it]
        for s in seqs:
            if isinstance(s, ast.Attribute) and isinstance(s.value, ast.Name) and s.value.id == "self":
                out.append(s.attr)
    return out


def _init_tensor_sequence(func: ast.FunctionDef, attr: str, ctx: Context) -> bool:
    """Does `__init__` of the class holding `func` bind `self.<attr>` to a sequence of
    tensors shaped like parameters: a comprehension (or `tuple` / `list` of one) over
    anything but `range`, or a display of two tensors or more?"""
    owner = analyzer(ctx).owner_class(func)
    if owner is None or _uniform_parameters(ctx):
        return False
    init = next((f for f in owner.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if init is None:
        return False
    values = [
        st.value
        for st in ast.walk(init)
        if isinstance(st, ast.Assign)
        and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr == attr
            for t in st.targets
        )
    ]
    return len(values) == 1 and _tensor_sequence(values[0])


def _keeps_sequences(func: ast.FunctionDef, ctx: Context) -> bool:
    """May `__init__` of the class holding `func` bind some attribute to a sequence of
    tensors? From flow's cached `__init__` values (a superset of what
    `_init_tensor_sequence` accepts): most classes keep none."""
    a = analyzer(ctx)
    owner = a.owner_class(func)
    if owner is None:
        return False
    cache: dict[int, bool] = ctx.cache.setdefault("ms226.keeps", {})
    hit = cache.get(id(owner))
    if hit is None:  # once per class, not per method
        # `any(_may_be_sequence(v) and _tensor_sequence(v) ...)` as a plain loop with
        # `_may_be_sequence` inlined: no generator, no call for the cells and primitives
        # nearly every value is
        hit = False
        call_t, name_t, sequences = ast.Call, ast.Name, _SEQUENCE_TYPES
        for values in a.self_values(owner).values():
            for v in values:
                t = type(v)
                if (
                    t in sequences
                    or t is call_t and type(v.func) is name_t and v.func.id in ("tuple", "list")  # type: ignore[union-attr]
                ) and _tensor_sequence(v):  # type: ignore[arg-type]
                    hit = True
                    break
            if hit:
                break
        cache[id(owner)] = hit
    return hit


#: the node types `_tensor_sequence` may accept (besides `tuple(...)` / `list(...)` of one)
_SEQUENCE_TYPES = frozenset({ast.ListComp, ast.GeneratorExp, ast.Tuple, ast.List})


def _may_be_sequence(v: ast.expr | None) -> bool:
    """`_tensor_sequence`'s shapes, from the node's type (and a call's callee) alone: most
    `__init__` values are calls of cells and primitives (`nn.Dense(...)`), passed here
    without a call of `_tensor_sequence`."""
    t = type(v)
    if t is ast.Call:
        f = v.func  # type: ignore[union-attr]
        return type(f) is ast.Name and f.id in ("tuple", "list")
    return t in _SEQUENCE_TYPES


def _tensor_sequence(v: ast.expr) -> bool:
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("tuple", "list") and len(v.args) == 1:
        v = v.args[0]
    if isinstance(v, (ast.ListComp, ast.GeneratorExp)):
        it = v.generators[0].iter
        over_range = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
        return not over_range and isinstance(v.elt, ast.Call)
    if isinstance(v, (ast.Tuple, ast.List)):
        return len(v.elts) >= 2 and all(isinstance(e, ast.Call) for e in v.elts)
    return False


def _uniform_parameters(ctx: Context) -> bool:
    """Does a class of the file make two Parameters or more in `__init__`, all from one
    expression (`Parameter(Tensor(np.ones((2, 3))), ...)` twice)? Then the sequences may hold
    tensors of one shape, which compile (probe `fix29c_acc_same_shapes`): left alone."""
    hit: bool | None = ctx.cache.get("ms226.uniform")
    if hit is None:
        hit = False
        for cls in ctx.tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            made = [
                node_key(n.args[0])
                for n in ast.walk(cls)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Parameter" and n.args
            ]
            if len(made) >= 2 and len(set(made)) == 1:
                hit = True
                break
        ctx.cache["ms226.uniform"] = hit
    return hit
