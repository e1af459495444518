"""MS121: a run-time tensor used as a dict key."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.host_values import host_item, host_names, host_scalar, reads

#: dict methods whose first argument is a key
_KEYED_METHODS = frozenset({"get", "pop", "setdefault"})


@rule(code="MS121", name="tensor-dict-key", severity="error", family="graphmode")
class TensorDictKey(GraphRule):
    """## What it does
    Flags dict keys in compiled code that are tensors computed at run time: in a dict
    display (`{x: 1}`), in a lookup or store (`d[x]`, `d[x] = v`) and in the key argument
    of `d.get(x)`, `d.pop(x)` and `d.setdefault(x)` on a dict (`for idx in indices:
    counts[idx] = counts.get(idx, 0) + 1`, with `indices` a tensor); also a Python number
    read from a run-time tensor as the key of a lookup or a store (`self.weights[int(label)]`,
    `table[step.item()]`, `d.get(float(t), 1.0)`, `d[int(t)] = v`), on a local dict, one
    `__init__` stores on `self` or a module-level dict (`PALETTE[int(t.argmax())]`). Under
    either level also the key of a dict display that is such a number or an item of a
    tensor's host data (`{t.item(): "top"}`, `{ids[0]: 1}` with `ids = t.tolist()`), and
    the key of a dict comprehension over host data (`{PALETTE[k]: v for k, v in
    Counter(t.asnumpy().tolist()).items()}`, `{NAMES[i]: v for i, v in enumerate(t.tolist())}`).

    ## Why is this bad?
    Graph dicts are resolved while compiling, so keys must be constants: strings, numbers,
    types, `None`, constant tensors or tuples of those. MindSpore stops with
    `RuntimeError: make_dict evaluator key only supports string, number, type, none, constant
    tensor and tuple, but got ValueAny` at every syntax level (`dict_getitem evaluator`,
    `dict_setitem evaluator` for lookups and stores). `int(t)` and `t.item()` do not help:
    their value is still unknown while compiling (`ValueAny`). A tensor the function builds
    from constants (`k = Tensor([1, 2])`, `Tensor(np.arange(6).reshape(2, 3))`) is a constant
    tensor and a valid key, also inside a tuple key. Keys made from host data (`tolist()`,
    `asnumpy()`, a `Counter` of them) in a comprehension are `ValueAny` too, even an
    `enumerate` index; a constant key with host values (`{NAMES[i]: vals[i] for i in
    range(3)}`) and a plain `for` over `t.tolist()` storing `d[i] = 1` compile under LAX.
    The key `k` of `for k, v in d.items()` is a constant even when the values are tensors
    (a dict a sub-cell returns included): graph dicts hold constant keys only (measured,
    heldout16a probes `fb16_dk_*`: `results[k].append(v)` compiles at LAX and STRICT).

    ## Example
    ```python
    def construct(self, x):
        d = {x: 1}
        return d
    ```

    ## Use instead
    Key by a constant name and keep the tensor as the value:
    ```python
    def construct(self, x):
        d = {"x": x}
        return d
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1: dict key that is a variable tensor.
    - Host-value keys measured on MindSpore 2.10 with the written heldout14b probes
      `hv_dict_*` (displays, comprehensions, lookups and stores: rejected at LAX and STRICT;
      host values as dict values and `for` stores: compile under LAX).
    """

    nodes = (ast.Dict, ast.DictComp, ast.Subscript, ast.Call)
    calls = _KEYED_METHODS  # of the calls, `d.get(k)`, `d.pop(k)`, `d.setdefault(k, v)`
    callee = (ast.Attribute,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if isinstance(node, ast.Subscript):
            # a tensor key is a name (`counts[idx]`); slices, constants and tuples never are,
            # and most subscripts in compiled code index tensors: skip them before any flow
            if type(node.slice) in (ast.Name, ast.Call) and type(node.value) in (ast.Name, ast.Attribute):
                return self._keyed(node.value, node.slice, ctx)
            return ()
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _KEYED_METHODS and node.args:
                return self._keyed(f.value, node.args[0], ctx)
            return ()
        if isinstance(node, ast.DictComp):
            return self._comprehension(node, ctx)
        assert isinstance(node, ast.Dict)
        return self._display(node, ctx)

    def _display(self, node: ast.Dict, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        for key in node.keys:
            # a tensor built from constants is a constant key (measured: MindSpore's
            # test_dict_with_multitype_keys_2, `{Tensor(np.arange(6).reshape(1, 2, 3)): 40.5}`
            # and `dic.get(that_tensor)` compile at LAX and STRICT; written/mstests `p121_*`)
            if key is not None and a.kind(key) == Kind.TENSOR and not _constant_key(key, ctx):
                yield ctx.diagnostic(
                    self,
                    key,
                    f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict keys must be constants",
                )
                return
            if key is not None and host_item(key, ctx):
                # `{int(t.argmax()): 1}`, `{t.item(): "top"}`, `{ids[0]: 1}` with `ids =
                # t.tolist()` (measured, written/heldout14b probes `hv_dict_display_key_*`:
                # `make_dict evaluator key only supports ... but got ValueAny` at LAX and STRICT)
                yield ctx.diagnostic(self, key, _host_key_message(key, ctx))
                return

    def _comprehension(self, node: ast.DictComp, ctx: Context) -> Iterable[Diagnostic]:
        """`{PALETTE[k]: v for k, v in Counter(t.tolist()).items()}`, `{i: 1 for i in
        t.tolist()}`: keys made from items of host data are `ValueAny` in the graph's
        `make_dict` (measured, written/heldout14b probes `hv_dict_comp_key_*`, rejected at
        LAX and STRICT; a constant key with host values, `{NAMES[i]: vals[i] for i in
        range(3)}`, compiles under LAX)."""
        key = node.key
        if host_item(key, ctx) or reads(key, host_names(node, ctx)):
            yield ctx.diagnostic(self, key, _host_key_message(key, ctx))

    def _keyed(self, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`d[key]`, `d.get(key)`...: MindSpore resolves dict lookups and stores while
        compiling (`dict_getitem` / `dict_setitem` evaluators), so a run-time tensor key
        fails as in a display."""
        a = analyzer(ctx)
        local = a.type_class(receiver) == "dict" or _self_dict(receiver, ctx)
        if not local and not _module_dict(receiver, ctx):
            return
        kind = a.kind(key)
        if kind == Kind.TENSOR and local and not _constant_key(key, ctx):
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict lookups and stores need constant keys",
            )
        elif kind == Kind.VAR and host_scalar(key, ctx):
            # `d[int(t)]`, `d[t.item()]`: a Python number read from a run-time tensor is
            # still unknown while compiling (measured: `dict_getitem evaluator ... but got
            # ValueAny` at LAX and STRICT, for a dict literal and one held on `self`)
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is read from a run-time tensor; graph dict lookups and stores need keys known while compiling",
            )


def _self_dict(receiver: ast.expr, ctx: Context) -> bool:
    """`self.table` bound only to a dict display in the class (`self.w = {0: 1.0}`)."""
    if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self"):
        return False
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    values = a._self_values(cls).get(receiver.attr, []) if cls is not None else []
    return bool(values) and all(isinstance(v, ast.Dict) for v in values)


def _module_dict(receiver: ast.expr, ctx: Context) -> bool:
    """A module-level name bound to a dict display (`PALETTE = {0: "road"}`) that the
    function does not bind (measured, written/heldout14b probe `hv_dict_getitem_host_key`:
    `PALETTE[int(t.argmax())]` fails with `dict_getitem evaluator key only supports ...`)."""
    if not isinstance(receiver, ast.Name) or ctx.function is None:
        return False
    a = analyzer(ctx)
    if a.first_binding_line(receiver.id, ctx.function) is not None:
        return False
    bound = [
        st.value
        for st in ctx.tree.body
        if isinstance(st, (ast.Assign, ast.AnnAssign))
        and any(isinstance(t, ast.Name) and t.id == receiver.id for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))
    ]
    return len(bound) == 1 and isinstance(bound[0], ast.Dict)


def _host_key_message(key: ast.expr, ctx: Context) -> str:
    return (
        f"dict key `{ctx.segment(key)}` is a Python value read from a run-time tensor, unknown while compiling;"
        " graph dicts need constant keys: keep the counts or scores in a tensor indexed by class (ops.* /"
        " Tensor methods), or build the dict outside construct"
    )
def _constant_key(key: ast.expr, ctx: Context) -> bool:
    """A tensor built from constants, or a tuple of those and constants (`(1, (t, "3"))`)."""
    if isinstance(key, ast.Name):
        bound = analyzer(ctx).single_assignment(key.id, ctx.function)
        if isinstance(bound, ast.Tuple):
            key = bound
    if isinstance(key, ast.Tuple):
        return all(_constant_key(x, ctx) for x in key.elts)
    return constant_tensor(key, ctx) is not None or analyzer(ctx).kind(key) == Kind.CONST
