"""MS121: a run-time tensor used as a dict key."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode.const_tensor import constant_tensor
from npu_lsp.rules.graphmode.dict_keys import (
    fallback_key,
    folded_away,
    module_dict,
    runtime_text,
    self_dict,
)
from npu_lsp.rules.graphmode.dynamic_shape import declared_dynamic_read_in_method, size_read
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule, own_nodes
from npu_lsp.rules.graphmode.host_values import (
    host_data,
    host_item,
    host_loop_target,
    host_names,
    host_scalar,
    reads,
)
from npu_lsp.rules.graphmode.ranks import declared_dynamic_size

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
    `table[step.item()]`, `d.get(float(t), 1.0)`, `d[int(t)] = v`, also through arithmetic
    with constants, `{1: 0.5, 2: 1.0}[int(t) + 1]`, or an item of a constant sequence it picks,
    `PARTS[NAMES[int(t)]]`), on a local dict, a display read at once, one `__init__` stores on
    `self` (a display, a dict comprehension, `dict()`, `OrderedDict()`, or a parameter every
    construction in the file gives a dict: `self.encoding = encoding` with `Net(ENC)`) or a
    module-level dict (`PALETTE[int(t.argmax())]`);
    under LAX not a number computed from a JIT Fallback value (`int(x.asnumpy().sum())`,
    `int(p.value.sum())` of a namedtuple built from a tensor, also in a helper given it or
    returned by one), which Python looks up. Under
    either level also the key of a dict display that is such a number or an item of a
    tensor's host data (`{t.item(): "top"}`, `{ids[0]: 1}` with `ids = t.tolist()`), and
    the key of a dict comprehension over host data (`{PALETTE[k]: v for k, v in
    Counter(t.asnumpy().tolist()).items()}`, `{NAMES[i]: v for i, v in enumerate(t.tolist())}`).
    An f-string formatting such a value as a key (`d[f"{int(pred)}"]`, `d[f"p{k.item()}"] =
    v`, at both levels; `d.get(f"{int(pred)}", "?")` under STRICT, LAX's is below;
    `f"{x.shape[0]}"` folds and compiles).
    Also a tuple key holding such a number (`self.known.get((int(h[i]), int(r[i])), set())`,
    `d[(t.item(), 1)] = v`; also a concatenation of tuples, prefix beam search's
    `nxt[prefix + (best,)] = s` with `best = int(lp[t].argmax())`), at both levels, and under
    LAX the key of `d.get(k, ...)` when
    `k` is the variable of a `for` over a tensor's host data (`for d in dst.asnumpy().tolist():
    deg[d] = deg.get(d, 0) + 1`), or an item of such data (`tokens[i]`, `tuple(tokens[i:i +
    2])` with `tokens = t.tolist()`) looked up in a local dict display before anything is
    stored into it (HF's no-repeat-ngram `d[p] = d.get(p, []) + [tok]`).
    A comprehension over a tensor counts as a `for` over it: MindSpore unrolls it along the
    first axis, each item a tensor, so `[self.idx_to_class[int(i)] for i in idx]` (`idx`
    from `argmax` / `topk`, also through `zip`, `enumerate` or a nested comprehension over
    its rows) looks up a run-time key; an `enumerate` index, `range(len(idx))` and
    `r.shape[0]` of an item stay constants.
    A size `net.set_inputs(Tensor(shape=[None, 3], ...))` declares unknown is a run-time key
    too (`self.cache[tuple(x.shape)] = v`), read from the input or from a tensor computed
    from it that keeps that dimension (`x = self.stage0(x)`, `x * 2`, `ops.cat([x, x])`), as
    it is, through arithmetic with constants (`d[x.shape[0] - 1]`) or as the index picking a
    key from a constant list (`self.heads[self.names[x.shape[0] - 1]]`).

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
    A tuple holding such a number is no constant either ("dict_getitem evaluator key should
    not be tuple that contains variables, but got ValueAny"). In a `for` over host data, LAX
    compiles `d[k]`, `d[k] = v`, `k in d` and `d.setdefault(k, v)` with the loop's variable
    `k`, but not `d.get(k, default)` ("TupleGetItem evaluator index should be in range[-3,
    3), but got 3", "cannot get item by index from an empty sequence"); the same `.get`
    with an item of host data fails on a dict display (empty or not) until a store under
    such a key has made it a Python dict (written/heldout26a probes `fix27a_dictget_*`,
    `fix27a_ngram_*`).
    A constant key picked by a run-time condition is no constant either, at both levels:
    `self.heads['a' if x.sum() > 0 else 'b'](x)` on an `nn.CellDict`, `w[0 if x.sum() > 0
    else 1]`, `d.get(...)` and stores with such a key, and a name bound to different
    constants on the sides of an `if` on a tensor (`if x.sum() > 0: k = 'a' else: k =
    'b'`) read after it; a condition that folds (`x.ndim == 2`) picks a constant. Under
    LAX a condition on a JIT Fallback value picks in the graph too (`'a' if
    x.asnumpy().sum() > 0 else 'b'`): the key is `ValueAny` even though
    `int(x.asnumpy().sum() > 0)` as the key itself is a Python object LAX looks up.
    A membership test of such a key folds instead: `k in d` is False while compiling (and
    `k not in d` True), so the body of `if k in d:` (or what follows `if k not in d:
    continue`) is never compiled and its `d[k]` is not flagged; the program compiles, but
    the graph never takes that branch (`text += d[k]` leaves `text` empty). Under `k > 0
    and k in d`, or after the `if`, the lookup is compiled and fails.
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
      host values as dict values and `for` stores: compile under LAX); tuple keys and `.get`
      in host loops: the written heldout15b probes `ls_dk_*`, `ls_hl_dict_*` and cases
      `kge_distmult_filtered_rank`, `r2_gnn_node_degree_python_dict`.
    - Tuple keys built by concatenation: written/heldout43d case
      `r2_beam_dict_prefixes_nonempty_init` and probes `h43d_dk_concat_*` ("dict_setitem /
      dict_getitem evaluator key should not be tuple that contains variables" at LAX and
      STRICT, either side, through a name, in a store, a lookup and `.get`; `prefix + (s,)`
      with `s` from `range`, `(0,) + (x.shape[0],)` and constant tuples compile).
    - Dicts on `self` made by a comprehension or given to the constructor, and keys picked
      from a constant list with a run-time number: the written heldout19b probes `dk19_*`
      (rejected at LAX and STRICT; a constant key, `int(t) in self.d` and a list indexed by
      `int(t)` compile).
    - Comprehensions over a tensor (a dict, `.get`, a nested or `zip` / `enumerate`
      comprehension, a generator given to `sum`): the written heldout19b probes `cv20_*`
      and case `vis_predict_class_names_strings` (rejected at LAX and STRICT; an
      `enumerate` index, `range(len(idx))`, `r.shape[0]` of an item compile).
    - Keys picked by a run-time condition: the written lax probes `genfresh31_dk_*`
      ("dict_getitem / dict_setitem evaluator key only supports ... but got ValueAny" at
      LAX and STRICT; under `x.ndim == 2`, and a `CellList` index, it compiles) and fresh
      v5 seed 11800158; a condition on a JIT Fallback value under LAX: written/lax probes
      `fix40b_dk_*` and fresh v6 seed 12001378 (rejected; `int(x.asnumpy().sum() > 0)` as
      the key and a lookup under each side compile).
    - Comprehension keys over values JIT Fallback made (`{i: r for i, r in enumerate(x)}`
      after `x = x * math.exp(...)`; `{f'c{i}': v for i, v in enumerate(x.tolist()[0])}`):
      the written famc probes `g17_an_dictcomp_*` (rejected at LAX and STRICT; over a
      tensor the graph computes it compiles).
    - Lookups guarded by `if k in d:` / `if k not in d: continue`: written/heldout38c case
      `decode_dict_lookup_in_construct_idx_to_char` and probes `fix38c_dictin_*` (compile at
      LAX and STRICT with `int(t)`, `.item()` or a tensor key, a dict on `self` or local;
      the graph's output is that of the branch never taken; `k > 0 and k in d` and a read
      after the `if` fail).
    - A key that is a size `net.set_inputs(Tensor(shape=[None, 3], ...))` declares unknown
      (`self.cache[tuple(x.shape)] = v`, `d[x.shape[0]]`, in `construct` or in a method it
      gives the input): difftest seed 12000128 and written/lax probes `fix32f_dynkey_*`
      ("dict_setitem evaluator key should not be tuple that contains variables, but got
      ValueAny" at LAX and STRICT; a declared dimension, and no `set_inputs`, compile).
    - The same size carried by a tensor computed from the input (`x = self.stage0(x)` through
      sub-cells and methods, arithmetic, `ops.cat`, broadcasting with `(1, 3)`), also picked
      from a constant list (`self.heads[self.names[x.shape[0] - 1]]`) or through arithmetic
      (`d[x.shape[0] - 1]`): fresh v6 seeds 12000224, 12000321 and written/lax probes
      `fix34c_dyn_*` (rejected at LAX and STRICT; a reduced or indexed away dimension, a
      declared one, a constant reshape and no `set_inputs` compile). The shapes model follows
      the file twice, the declared `None` given two sizes: a dimension that differs between
      the two runs carries it.
    """

    nodes = (ast.Dict, ast.DictComp, ast.Subscript, ast.Call)
    calls = _KEYED_METHODS  # of the calls, `d.get(k)`, `d.pop(k)`, `d.setdefault(k, v)`
    callee = (ast.Attribute,)

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        # not a generator itself: most nodes stop at these tests, for the cost of a call
        # rather than of a generator each
        if type(node) is ast.Subscript:
            # a tensor key is a name (`counts[idx]`); slices, constants and tuples never are,
            # and most subscripts in compiled code index tensors: skip them before any flow
            if type(node.value) not in (ast.Name, ast.Attribute, ast.Dict):
                return ()
            if type(node.slice) in _KEY_NODES:
                return self._keyed(node.value, node.slice, ctx)
            if type(node.slice) is ast.JoinedStr:
                return self._formatted_key(node.value, node.slice, ctx)
            if type(node.slice) is ast.Tuple and any(type(x) is ast.Call for x in node.slice.elts):
                return self._keyed(node.value, node.slice, ctx)  # `d[(int(h), 1)]`
            return ()
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _KEYED_METHODS and node.args:
                if f.attr == "get" and type(node.args[0]) is ast.JoinedStr and ctx.scope and ctx.scope.strict:
                    return self._formatted_key(f.value, node.args[0], ctx)  # (LAX: `_getter`)
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
        if host_item(key, ctx) or reads(key, host_names(node, ctx)) or reads(key, _interpreted_names(node, ctx)):
            yield ctx.diagnostic(self, key, _host_key_message(key, ctx))

    def _keyed(self, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`d[key]`, `d.get(key)`...: MindSpore resolves dict lookups and stores while
        compiling (`dict_getitem` / `dict_setitem` evaluators), so a run-time tensor key
        fails as in a display; not in a branch a run-time membership test folds away."""
        for d in self._keyed_read(receiver, key, ctx):
            if folded_away(key, ctx):
                return
            yield d

    def _keyed_read(self, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        a = analyzer(ctx)
        call = ctx.parent(key)
        getter = type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr == "get"
        if getter and a.kind(receiver) != Kind.TENSOR:
            yield from self._getter(call, receiver, key, ctx)  # type: ignore[arg-type]
        local = isinstance(receiver, ast.Dict) or a.type_class(receiver) == "dict" or self_dict(receiver, ctx)
        if not local and not module_dict(receiver, ctx) and not getter:
            return
        size = _run_time_size_key(key, ctx)
        if size is not None:
            # `self.cache[tuple(x.shape)] = v`, `d[x.shape[0]]` with that dimension declared
            # `None` by `net.set_inputs(...)` (measured, difftest seed 12000128, written/lax
            # probes `fix32f_dynkey_*`: "dict_setitem evaluator key should not be tuple that
            # contains variables" / "key only supports ... but got ValueAny" at LAX and
            # STRICT; a declared dimension, and the same code without `set_inputs`, compile)
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` holds `{ctx.segment(size)}`, a size `set_inputs` declares unknown (`None`): graph dict keys must be known while compiling; key the table by a declared dimension, or keep one entry",
            )
            return
        scalar = _runtime_tuple_item(key, ctx)
        if scalar is not None:
            # `d[(int(h), 1)]`, `d.get((t.item(), 1))`, `d[(int(h), 1)] = v` (measured,
            # written/heldout15b probes `ls_dk_tuple_*`: "dict_getitem / dict_setitem evaluator
            # key should not be tuple that contains variables, but got ValueAny" at LAX and
            # STRICT; a tuple of constants or shapes compiles)
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is a tuple holding `{ctx.segment(scalar)}`, a number read from a run-time tensor: graph dict keys must be known while compiling; keep the table in a tensor (`ops.gather` / a mask) or look it up outside the graph",
            )
            return
        if not local and not module_dict(receiver, ctx):
            return
        cond = _runtime_choice(key, ctx)
        if cond is not None:
            # `self.heads['a' if x.sum() > 0 else 'b']`, `d[k]` after `if x.sum() > 0: k = 'a'
            # else: k = 'b'`: the graph joins the constants into a value unknown while
            # compiling (measured, written/lax probes `genfresh31_dk_*`: "dict_getitem /
            # dict_setitem evaluator key only supports ... but got ValueAny" at LAX and
            # STRICT, for a CellDict, a display, a local, `self` or module dict, `.get` and a
            # store; under `x.ndim == 2`, which folds, and for a CellList index it compiles)
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is picked by `{ctx.segment(cond)}`, a condition known only at run time: the graph joins the keys into a value unknown while compiling, and dict lookups and stores need keys known then; look each key up under its own branch (`d['a'] if cond else d['b']`)",
            )
            return
        kind = a.kind(key)
        # an item picked as a key (`d[r[0]]`) is looked at for a picked host number only:
        # `r = sorted(d.keys())` of a dict holding tensors is a list of constant keys
        # (written/heldout16b probe `ls17_so_display_keys` compiles)
        if kind == Kind.TENSOR and local and type(key) is not ast.Subscript and not _constant_key(key, ctx):
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is a run-time tensor; graph dict lookups and stores need constant keys",
            )
        elif kind == Kind.VAR and _host_number(key, ctx, 0) and not fallback_key(key, ctx):
            # `d[int(t)]`, `d[t.item()]`, `{0: a, 1: b}[int(t) + 1]`: a Python number read
            # from a run-time tensor is still unknown while compiling (measured: `dict_getitem
            # evaluator ... but got ValueAny` at LAX and STRICT, for a dict literal, a display
            # read at once and one held on `self`; written/famc probes `fb_dk_*`)
            yield ctx.diagnostic(
                self,
                key,
                f"dict key `{ctx.segment(key)}` is read from a run-time tensor; graph dict lookups and stores need keys known while compiling",
            )

    def _formatted_key(self, receiver: ast.expr, key: ast.JoinedStr, ctx: Context) -> Iterable[Diagnostic]:
        """`d[f"{int(pred)}"]`, `d[f"p{int(pred)}"] = v` (both levels) and `d.get(f"{int(pred)}")`
        (STRICT; LAX: `_getter`): an f-string formatting a value known only at run time is a
        `ValueAny` key (measured, written/zoo probes `ld23_dg_fstr_get`, `strict24_dg_fstr_*`:
        "dict_getitem / dict_setitem evaluator key only supports string, number, ... but got
        ValueAny"; `f"{x.shape[0]}"` folds and compiles)."""
        a = analyzer(ctx)
        if not (isinstance(receiver, ast.Dict) or a.type_class(receiver) == "dict" or self_dict(receiver, ctx) or module_dict(receiver, ctx)):
            return
        if not runtime_text(key, ctx) or folded_away(key, ctx):
            return
        yield ctx.diagnostic(
            self,
            key,
            f"dict key `{ctx.segment(key)}` formats a value known only at run time: graph dict lookups and stores need keys known while compiling; keep the table in a tensor, or look it up outside the graph",
        )

    def _getter(self, call: ast.Call, receiver: ast.expr, key: ast.expr, ctx: Context) -> Iterable[Diagnostic]:
        """`d.get(k, v)` with `k` the variable of a `for` over host data: LAX fails
        ("TupleGetItem evaluator index should be in range[-3, 3), but got 3", "cannot get
        item by index from an empty sequence"; measured, written/heldout15b probes
        `ls_dk_loopvar_get_*`, `ls_hl_dict_count_*`) while `d[k]`, `d[k] = v`, `k in d` and
        `d.setdefault(k, v)` compile; STRICT refuses the host data itself (MS130)."""
        if not ctx.scope or ctx.scope.level != "lax":
            return
        loop = host_loop_target(key, ctx)
        if loop is None:
            if _host_data_key(key, ctx, 0) and _unfilled_display(receiver, call, ctx):
                # `d.get(tokens[0], 0)`, `d.get(tuple(tokens[i:i + 1]), [])` with `tokens =
                # t.tolist()`, on a dict display nothing has stored into yet (measured,
                # written/heldout26a case `r2_proc_no_repeat_ngram_dict_get_concat`, probes
                # `fix27a_ngram_*`, `fix27a_dictget_*`: "cannot get item by index from an
                # empty sequence", "TupleGetItem evaluator index should be in range[-1, 1)";
                # after a store under such a key the dict is a Python object and `.get`
                # compiles, as do `k in d` and constant keys)
                yield ctx.diagnostic(
                    self,
                    call,
                    f"`{ctx.segment(call)}` looks up `{ctx.segment(key)}`, an item of a tensor's values JIT Fallback made, in the graph's dict `{ctx.segment(receiver)}`: under LAX MindSpore cannot compile `.get` with such a key; count with tensors, or build the dict outside the network",
                )
                return
            if runtime_text(key, ctx):
                # `d.get(str(int(pred)), "unknown")`, `d.get(f"{int(pred)}")`: text made from a
                # run-time number (measured, written/heldout23b `r2_label_dict_get_str_key`,
                # written/zoo probes `ld23_dg_*`: "TupleGetItem evaluator index should be in
                # range[-2, 2)", "dict_getitem evaluator key only supports ..."; `d[str(int(pred))]`
                # compiles under LAX)
                yield ctx.diagnostic(
                    self,
                    call,
                    f"`{ctx.segment(call)}` looks up `{ctx.segment(key)}`, text made from a number read from a run-time tensor: under LAX MindSpore cannot compile `.get` with such a key; index with `d[...]`, or keep the table in a tensor",
                )
            return
        yield ctx.diagnostic(
            self,
            call,
            f"`{ctx.segment(call)}` looks up `{ctx.segment(key)}`, a variable of the `for` over `{ctx.segment(loop.iter)}` (line {loop.lineno}) that JIT Fallback runs on a tensor's values: under LAX MindSpore cannot compile `.get` with such a key; count with tensors (`ops.bincount`, `(t == k).sum()`) or index with `d[{ctx.segment(key)}]`",
        )


def _host_data_key(key: ast.expr, ctx: Context, depth: int) -> bool:
    """An item of a tensor's host data (`tokens[0]` with `tokens = t.tolist()`), a tuple of
    a slice of it (`tuple(tokens[i:i + 2])`), or a name bound once to one of these; not a
    host scalar (`int(t)`, `t.item()`: `_keyed`'s)."""
    t = type(key)
    if t is ast.Name:
        if depth > 1:
            return False
        bound = analyzer(ctx).single_assignment(key.id, ctx.function)  # type: ignore[attr-defined]
        return bound is not None and _host_data_key(bound, ctx, depth + 1)
    if t is ast.Subscript:
        return host_data(key.value, ctx) and not host_scalar(key, ctx)  # type: ignore[attr-defined]
    if t is ast.Call and type(key.func) is ast.Name and key.func.id == "tuple" and len(key.args) == 1:  # type: ignore[attr-defined]
        return ctx.qualname(key.func) == "builtins.tuple" and _host_data_key(key.args[0], ctx, depth)  # type: ignore[attr-defined]
    return False


#: dict methods that put a key into their receiver
_DICT_FILLERS = frozenset({"update", "setdefault", "__setitem__", "fromkeys"})


def _unfilled_display(receiver: ast.expr, call: ast.Call, ctx: Context) -> bool:
    """Is `receiver` a local name bound once to a dict display, with no item stored into it
    (`d[k] = v`, `d[k] += v`, `d.update(...)`, `d.setdefault(...)`) by a statement that
    starts before the one holding `call`? (The graph's dict it is until then.)"""
    fn = ctx.function
    if type(receiver) is not ast.Name or fn is None:
        return False
    if type(analyzer(ctx).single_assignment(receiver.id, fn)) is not ast.Dict:
        return False
    st: ast.AST | None = call
    while st is not None and not isinstance(st, ast.stmt):
        st = ctx.parent(st)
    if st is None:
        return False
    at = (st.lineno, st.col_offset)
    for n in own_nodes(fn):
        if type(n) is not ast.Name or n.id != receiver.id or (n.lineno, n.col_offset) >= at:
            continue
        p = ctx.parent(n)
        if type(p) is ast.Subscript and type(p.ctx) is not ast.Load and p.value is n:
            return False
        if type(p) is ast.Attribute and p.attr in _DICT_FILLERS:
            return False
    return True


def _run_time_size_key(key: ast.expr, ctx: Context, depth: int = 0) -> ast.expr | None:
    """The size read a key is (`x.shape`, `x.shape[0]`, `tuple(x.shape)`, or a name bound
    once to one), or holds through arithmetic with constants (`x.shape[0] - 1`) or as the
    index picking an item of a constant sequence (`self.names[x.shape[0] - 1]`), when
    `set_inputs` declares that size unknown; only in files that call it."""
    if not ctx.mentions("set_inputs") or depth > 3:
        return None
    if type(key) is ast.Name:
        bound = analyzer(ctx).single_assignment(key.id, ctx.function)
        if bound is None:
            return None
        key = bound
    if type(key) is ast.Call and type(key.func) is ast.Name and key.func.id == "tuple" and len(key.args) == 1:
        key = key.args[0]
    if type(key) is ast.BinOp:
        # `x.shape[0] - 1`: Python arithmetic on a run-time size is one too
        sides = (key.left, key.right)
        if any(type(x) is ast.Constant and type(x.value) is int for x in sides):
            other = key.right if type(key.left) is ast.Constant else key.left
            return _run_time_size_key(other, ctx, depth + 1)
        return None
    if type(key) is ast.Subscript and type(key.slice) is not ast.Slice and size_read(key) is None:
        # `self.names[x.shape[0] - 1]`: an item of a constant sequence picked by such a
        # size (measured, fresh v6 seed 12000224 on an `nn.CellDict`, written/lax probes
        # `fix34c_dyn_pick_*`; without `set_inputs` it folds and compiles, `dk19_listpick_*`)
        if analyzer(ctx).kind(key.value) != Kind.CONST:
            return None
        return _run_time_size_key(key.slice, ctx, depth + 1)
    if declared_dynamic_read_in_method(key, ctx):
        return key
    return key if _carried_dynamic_read(key, ctx) else None


def _carried_dynamic_read(read: ast.expr, ctx: Context) -> bool:
    """A size read (`x.shape[0]`, `x.shape`) of a tensor that carries a dimension `set_inputs`
    declares unknown after the input was bound again (`x = self.stage0(x)`, `x = x * 2`;
    measured, fresh v6 seeds 12000224, 12000321, written/lax probes `fix34c_dyn_*`)."""
    got = size_read(read)
    if got is None or ctx.function is None:
        return False
    t, dim = got
    return declared_dynamic_size(t, dim if type(dim) is int else None, ctx.function, ctx)


def _runtime_tuple_item(key: ast.expr, ctx: Context, depth: int = 0) -> ast.expr | None:
    """The item of a tuple key (a display, a concatenation of tuples, or a name bound once
    to one) that is a number read from a run-time tensor (`int(t[0])`, `t.item()`).
    A concatenation keeps the item: prefix beam search's `nxt[prefix + (best,)] = ...` with
    `best = int(lp[t].argmax())` (measured, written/heldout43d case
    `r2_beam_dict_prefixes_nonempty_init` and probes `h43d_dk_concat_*`: "dict_setitem
    evaluator key should not be tuple that contains variables, but got ValueAny" at LAX and
    STRICT; `prefix + (s,)` with `s` from `range` or a shape compiles)."""
    if type(key) is ast.Name and depth < 3:
        bound = analyzer(ctx).single_assignment(key.id, ctx.function)
        if type(bound) in (ast.Tuple, ast.BinOp):
            key = bound  # type: ignore[assignment]
    if type(key) is ast.BinOp and type(key.op) is ast.Add and depth < 3:
        return _runtime_tuple_item(key.left, ctx, depth + 1) or _runtime_tuple_item(key.right, ctx, depth + 1)
    if type(key) is not ast.Tuple:
        return None
    return next((x for x in key.elts if host_scalar(x, ctx)), None)


#: key nodes `_keyed` looks at (a name, a call, host arithmetic, an item picked, a
#: conditional pick); slices, constants and tuples never
_KEY_NODES = (ast.Name, ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.IfExp)


def _runtime_choice(key: ast.expr, ctx: Context) -> ast.expr | None:
    """The run-time condition that picks the constant key `key`: `'a' if c else 'b'`, or a
    local name every binding of which gives a constant (two different ones at least), one of
    them under `if c:` / `else:` (a name bound once to such a pick too). None when the
    condition folds while compiling (`x.ndim == 2`)."""
    a = analyzer(ctx)
    if type(key) is ast.IfExp:
        if not (type(key.body) is ast.Constant and type(key.orelse) is ast.Constant):
            return None
        return key.test if _runtime_test(key.test, ctx) else None
    fn = ctx.function
    if type(key) is not ast.Name or fn is None or _is_parameter(key.id, fn):
        return None
    binds = a.bindings_of(key.id, fn)
    values = [v for _, v in binds]
    if len(values) == 1 and type(values[0]) is ast.IfExp:
        return _runtime_choice(values[0], ctx)
    constants = [v for v in values if isinstance(v, ast.Constant)]
    if len(values) < 2 or len(constants) != len(values) or len({repr(c.value) for c in constants}) < 2:
        return None
    for v in constants:
        branch = _enclosing_if(v, fn, ctx)
        # read inside the `if` that binds it, the name is that side's constant
        inside = branch is not None and branch.lineno <= key.lineno <= (branch.end_lineno or branch.lineno)
        if branch is not None and not inside and _runtime_test(branch.test, ctx):
            return branch.test
    return None


def _runtime_test(test: ast.expr, ctx: Context) -> bool:
    """Is `test` known only at run time in the graph (a tensor or a run-time scalar)? Also
    one on a JIT Fallback value under LAX: the graph still joins the two constants into
    `ValueAny` (measured, written/lax probes `fix40b_dk_*`: `'a' if s > 0 else 'b'` and
    `if s > 0: key = 'a'` with `s = x.asnumpy().sum()`, or after `x = x +
    Tensor(x.asnumpy())` or a namedtuple's `_asdict()['value']`, fail at LAX with
    "dict_getitem evaluator key only supports ... but got ValueAny"; difftest v6 seed
    12001378)."""
    return analyzer(ctx).kind(test).dynamic


def _is_parameter(name: str, fn: ast.AST) -> bool:
    args = getattr(fn, "args", None)
    if args is None:
        return False
    return any(p.arg == name for p in [*args.posonlyargs, *args.args, *args.kwonlyargs])


def _enclosing_if(node: ast.AST, fn: ast.AST, ctx: Context) -> ast.If | None:
    """The innermost `if` statement of `fn` whose body or `else` holds `node`."""
    p = ctx.parent(node)
    while p is not None and p is not fn:
        if type(p) is ast.If:
            return p
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.For, ast.While)):
            return None
        p = ctx.parent(p)
    return None


def _host_number(key: ast.expr, ctx: Context, depth: int) -> bool:
    """A host scalar (`int(t)`, `t.item()`), arithmetic on one with constants (`int(t) + 1`,
    `1 - k`), an item of a constant sequence it picks (`NAMES[int(t)]`), or a name bound once
    to one of these."""
    if host_scalar(key, ctx):
        return True
    if isinstance(key, ast.Name) and depth < 3:
        bound = analyzer(ctx).single_assignment(key.id, ctx.function)
        return isinstance(bound, (ast.BinOp, ast.UnaryOp, ast.Subscript)) and _host_number(bound, ctx, depth + 1)
    if isinstance(key, ast.Subscript):
        # `NAMES[int(t)]`, `self.names[int(t)]`: an item of a constant sequence picked with
        # such a number is unknown while compiling too (measured, written/heldout19b probes
        # `dk19_listpick_*`: `PARTS[NAMES[int(t)]]` fails with "dict_getitem evaluator key only
        # supports ... ValueAny" at LAX and STRICT; `NAMES[x.shape[0] - 1]` compiles)
        return (
            not isinstance(key.slice, (ast.Slice, ast.Tuple))
            and analyzer(ctx).kind(key.value) == Kind.CONST
            and _host_number(key.slice, ctx, depth + 1)
        )
    if isinstance(key, ast.UnaryOp):
        return _host_number(key.operand, ctx, depth)
    if isinstance(key, ast.BinOp):
        sides = (key.left, key.right)
        return all(isinstance(x, ast.Constant) or _host_number(x, ctx, depth) for x in sides) and not all(
            isinstance(x, ast.Constant) for x in sides
        )
    return False


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


def _interpreted_names(node: ast.DictComp, ctx: Context) -> set[str]:
    """Names the comprehension binds over values LAX holds as Python objects
    (`{i: r for i, r in enumerate(x)}` after `x = x * math.exp(...)`): its keys are `ValueAny`
    too (measured, written/famc probes `g17_an_dictcomp_*`)."""
    from npu_lsp.rules.graphmode.interpreted import interpreted

    scope, func = ctx.scope, ctx.function
    if scope is None or scope.level != "lax" or func is None:
        return set()
    return {
        t.id
        for g in node.generators
        if interpreted(g.iter, ctx, func)
        for t in ast.walk(g.target)
        if type(t) is ast.Name
    }
