"""MS169: `.item()` of an int32 tensor used as a tuple index, a slice bound or a shape."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from npu_lsp.diagnostics import Diagnostic
from npu_lsp.engine import Context
from npu_lsp.registry import rule
from npu_lsp.rules.graphmode import abstract as av
from npu_lsp.rules.graphmode.abstract_eval import values
from npu_lsp.rules.graphmode.flow import Kind, analyzer
from npu_lsp.rules.graphmode.helpers import GraphRule
from npu_lsp.rules.graphmode.runtime_index_into_constants import bound_locally, module_literal

#: tensor methods whose arguments are a shape (or sizes) MindSpore builds as a tuple of int64
_SHAPE_METHODS = frozenset({"reshape", "view", "tile", "expand", "broadcast_to", "repeat"})
#: `mindspore.ops` functions taking a shape tuple, and which argument holds it
_SHAPE_FUNCS = {"reshape": 1, "tile": 1, "broadcast_to": 1, "zeros": 0, "ones": 0, "full": 0, "fill": 1}


def _bilinear_sizes(call: ast.Call, ctx: Context) -> list[ast.expr]:
    """The items of the `size` tuple given to `ops.interpolate(..., mode="bilinear")`: its
    ResizeBilinearV2 kernel takes the sizes as they are, while "nearest" and "bicubic" first
    make an int32 tensor of them (measured, written/heldout29b probes `fix30b_interp_item_*`:
    Int32 items rejected with "bilinear" at both levels, compiled under LAX with "nearest" /
    "bicubic")."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "interpolate") or (ctx.qualname(f) or "").split(".")[0] != "mindspore":
        return []
    mode = next((k.value for k in call.keywords if k.arg == "mode"), call.args[3] if len(call.args) > 3 else None)
    if not (isinstance(mode, ast.Constant) and mode.value == "bilinear"):
        return []
    size = next((k.value for k in call.keywords if k.arg == "size"), call.args[1] if len(call.args) > 1 else None)
    return list(size.elts) if isinstance(size, (ast.Tuple, ast.List)) else []


def _tolist(v: ast.expr | None) -> bool:
    """`<array>.tolist()`: a Python list, whatever the array."""
    return type(v) is ast.Call and type(v.func) is ast.Attribute and v.func.attr == "tolist" and not v.args and not v.keywords


@rule(code="MS169", name="int32-item-as-index", severity="error", family="graphmode")
class Int32ItemAsIndex(GraphRule):
    """## What it does
    Flags `t.item()` of an int32 tensor computed at run time (an input built with
    `Tensor(2, ms.int32)`, a cast to int32) used where MindSpore needs an int64 index or
    size: as the index of a tuple (`SCALES[i.item()]`, also through a name `k = i.item()`),
    as the index of a list under STRICT, as the index of a store into a list
    (`counts[i.item()] += 1.0`, every level), as an index of a tensor (`probs[0, a]` with
    `a = ops.multinomial(probs, 1)[0, 0].item()`), as a slice bound (`x[:, :n.item()]`, also
    of a store into a tensor, `self.queue[:, p : p + n] = x` with `p = self.ptr.item()` of an
    int32 Parameter), in
    the sizes of `reshape` / `view` / `tile` and
    in the shape given to `ops.zeros` / `ops.ones` / `ops.reshape`, and in the `size` of
    `ops.interpolate(..., mode="bilinear")` (also `int(t.item())` or arithmetic on the item
    there); `int(t.item())` / `float(t.item())` of such a tensor, wherever the result
    goes; and the item itself (not arithmetic on it) tested `in` / `not in` a tuple or list
    of Python numbers (`k in (1, 2, 3)`, `k in self.ids`, a module constant). Also an
    int32 tensor itself (not its item) as a slice bound of a store into a tensor
    (`mask[cy:cy + 2, cx:cx + 2] = 0.0` with `cy` given as `Tensor(1, ms.int32)`).

    ## Why is this bad?
    In compiled code `.item()` of an int32 tensor is an Int32 scalar known only at run time.
    MindSpore 2.10 stops at every syntax level: the tuple read has no kernel for it (`Select
    CPU operator[RealTupleGetItem] fail! Unsupported data type!`), a constant one fails with
    `TupleGetItem evaluator index should be an int64 number, but got AbstractScalar(Type:
    Int32 ...)`, and a shape mixing it with int64 sizes fails with `RealMakeTuple ... does
    not support this kernel data type: (Int32, Int64)`. `int(t)` in the same places compiles,
    and so does `.item()` of an int64 tensor (`x.argmax(1)`), or an index into a list under
    LAX (STRICT has the same kernel failure for a list: `self.betas[t.item()]`).
    Converting the Int32 item itself, `int(lengths.max().item())` (espnet's `make_pad_mask`)
    or `float(...)`, needs a `ScalarCast` the CPU backend has no kernel for: `Select CPU
    operator[ScalarCast] fail! Unsupported data type!` at every level, even when the result
    is only multiplied; `int(lengths.max())` of the tensor and an int64 item compile.
    The values `ops.max(t)[0]`, `ops.min(t, 0)[0]`, `ops.amax(t)`, `ops.sort(t)[0]`,
    `ops.aminmax(t)[1]` keep `t`'s dtype, and `ops.cummin(t, 0)[1]` is Int32 indices
    (ms_join.json `indexed_result_dtypes`; Tacotron's `int(ops.max(lengths)[0].item())`
    fails the same way); the indices of `ops.max` / `ops.median` / `ops.cummax` and of
    `t.max(axis=0, return_indices=True)` are Int64 and compile.
    Membership of the Int32 item in a sequence of Python numbers (Int64 ints, Float32
    floats) fails with `For InSequence, the list existing item abstract ... Int64 ... is
    not same with the new added item abstract ... Int32`; a dict, `int(t)` and
    `t.item() + 1` (an Int64) compile.
    A slice store with int32 tensor bounds needs SliceToIndices, whose CPU kernel takes
    int64 bounds only: `Select CPU operator[SliceToIndices] fail! Unsupported data type!`
    at every level (or, on a row of a tensor picked in a `for` loop, "For 'TupleGetItem',
    input[0] should be Sequence"); int64 bounds, a cast `.astype(ms.int64)`, Python ints,
    the same slice read, and an int32 index without a slice compile.

    ## Example
    ```python
    @ms.jit
    def scale(x, level):
        scales = (1.0, 0.5, 0.25)
        return x * scales[level.item()]

    scale(x, Tensor(1, ms.int32))
    ```

    ## Use instead
    Convert with `int()` (or pass an int64 tensor):
    ```python
    @ms.jit
    def scale(x, level):
        scales = (1.0, 0.5, 0.25)
        return x * scales[int(level)]
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - RULES.md, section 1 (rejected at every level); measured on MindSpore 2.10 CPU with the
      written set `runtime` (`item_used_as_list_index`, `reshape_by_item_rows`,
      `ones_shape_from_item`) and probes with int32 and int64 neighbours
      (tests/npu_lsp/fixtures/written/runtime/README.md, Phase 2); a tensor indexed by one:
      the written set `domains` (`rl_policy_sample_item_python_list`) and its `item_*`
      probes (Int32 from an input, a cast or `ops.multinomial` rejected at both levels with
      `Select CPU operator[ScalarCast]`; int64 items and `int(...)` compile); `int()` /
      `float()` of an Int32 item: the written set `heldout18a`
      (`asr_length_mask_from_max_item`) and its probes `fe18a_it_*`; `ops.interpolate`
      sizes: written/heldout29b `r2_seg_interpolate_size_item_ints` and probes
      `fix30b_interp_item_*` ("Select CPU operator[ResizeBilinearV2] fail" at both levels;
      "nearest" and "bicubic", which make an int32 tensor of the sizes first, an int64
      item and `int(t)` compile under LAX).
    - A list on `self` from `.tolist()` of a numpy array: written/heldout36b case
      `r2_ldm_item_index_python_list` and probes `fix36e_ix_*` (an int32 item into a list
      of floats or ints rejected under STRICT only, into a tuple at both levels; an int64
      item and `int(t)` compile).
    - Membership: written/heldout38c probes `fix39a_in_*` and `fix40a_in_*` (a tuple or
      list display, a module constant, a tuple or list on `self`, `not in`, float items,
      at both levels; an int64 or float32 item, a dict, two Int32 items compile).
    - An int32 tensor as a slice bound of a store: written/heldout41d case
      `r2_aug_cutout_setitem_tensor_bounds` and probes `fix41d_sl_*` (one or two slices, a
      start only, a tensor value, `@ms.jit`, an `argmax(...).astype(ms.int32)`; int64,
      default `Tensor(1)`, a cast to int64, the read and a plain index compile), and
      written/heldout35a (`specaug_*` cases, probes `fix35f_sl_*`).
    """

    nodes = (ast.Subscript, ast.Call, ast.Compare)
    # a file that never calls `.item()` has no Int32 scalar to follow, and one that never
    # names int32 has no int32 tensor as a slice bound
    words = (".item()", "int32")

    def check(self, node: ast.AST, ctx: Context) -> Iterable[Diagnostic]:
        if isinstance(node, ast.Compare):
            yield from self._membership(node, ctx)
            return
        if isinstance(node, ast.Subscript):
            if not isinstance(node.ctx, ast.Load):
                # measured (written/trainsteps probes `setitem_item_*`): a store into a list
                # (`counts[i.item()] += 1.0`) fails at every level, "list_setitem evaluator
                # index should be an int64 number, but got a Int32 number"
                if self._int32_item(node.slice, ctx) and self._is_sequence(node.value, ctx, (ast.List, ast.ListComp), "list"):
                    yield self._report(node.slice, f"the index of a store into the list `{ctx.segment(node.value)}`", ctx)
                    return
                # a slice bound of a store into a tensor (`self.queue[:, p : p + n] = x` with
                # `p = ptr.item()`) fails as in a read, at every level (measured,
                # written/heldout37b case `r2_albef_queue_ptr_parameter_item_slice`, probes
                # `fix37d_qp_*`: "Select CPU operator[SliceToIndices] fail"; int64 compiles)
                index = node.slice
                parts = index.elts if isinstance(index, ast.Tuple) else [index]
                if analyzer(ctx).kind(node.value) == Kind.TENSOR:
                    for part in parts:
                        if isinstance(part, ast.Slice):
                            for bound in (part.lower, part.upper):
                                if bound is not None and self._int32_item(bound, ctx):
                                    yield self._report(bound, "a slice bound of a store into a tensor", ctx)
                                    return
                                if bound is not None and _int32_tensor(bound, ctx):
                                    yield self._report_tensor_bound(bound, ctx)
                                    return
                return
            index = node.slice
            if isinstance(index, ast.Slice) or (isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts)):
                parts = index.elts if isinstance(index, ast.Tuple) else [index]
                for part in parts:
                    if isinstance(part, ast.Slice):
                        for bound in (part.lower, part.upper):
                            if bound is not None and self._int32_item(bound, ctx):
                                yield self._report(bound, "a slice bound", ctx)
                                return
                    elif self._int32_item(part, ctx) and analyzer(ctx).kind(node.value) == Kind.TENSOR:
                        yield self._report(part, f"an index of the tensor `{ctx.segment(node.value)}`", ctx)
                        return
                return
            if self._int32_item(index, ctx):
                if self._is_tuple(node.value, ctx):
                    yield self._report(index, f"the index of the tuple `{ctx.segment(node.value)}`", ctx)
                    return
                if ctx.scope is not None and ctx.scope.strict and self._is_sequence(node.value, ctx, (ast.List, ast.ListComp), "list"):
                    # measured (probes seq_item_*): LAX reads a list through the interpreter
                    yield self._report(index, f"the index of the list `{ctx.segment(node.value)}` under STRICT", ctx)
                    return
            # `probs[0, a]` / `x[a]` on a tensor: the index is cast to int64 by a `ScalarCast`
            # kernel the CPU backend does not have for a run-time Int32 (measured)
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            for part in parts:
                if self._int32_item(part, ctx) and analyzer(ctx).kind(node.value) == Kind.TENSOR:
                    yield self._report(part, f"an index of the tensor `{ctx.segment(node.value)}`", ctx)
                    return
            return
        assert isinstance(node, ast.Call)
        f = node.func
        if (
            isinstance(f, ast.Name)
            and f.id in ("int", "float")
            and len(node.args) == 1
            and not node.keywords
            and self._int32_item(node.args[0], ctx)
            and ctx.qualname(f) == f"builtins.{f.id}"
        ):
            # measured (written/heldout18a `asr_length_mask_from_max_item`, probes `fe18a_it_*`):
            # converting the Int32 scalar needs a `ScalarCast` kernel the CPU backend lacks for
            # it ("Select CPU operator[ScalarCast] fail! Unsupported data type!"), at every
            # level and whatever the result is used for; `int(t)` of the tensor compiles
            arg = node.args[0]
            yield ctx.diagnostic(
                self,
                node,
                f"`{ctx.segment(arg)}` is an Int32 scalar known only at run time; `{f.id}()` of it needs a ScalarCast MindSpore has no kernel for (\"Select CPU operator[ScalarCast] fail\"): convert the tensor itself, `{f.id}({ctx.segment(arg.func.value) if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) else ctx.segment(arg)})`",  # noqa: E501
            )
            return
        for size in self._shape_args(node, ctx):
            if self._int32_item(size, ctx):
                yield self._report(size, "a size of a shape", ctx)
                return
        for size in _bilinear_sizes(node, ctx):
            if self._int32_item(size, ctx) or self._int32_converted(size, ctx):
                yield self._report(size, "a `size` of `ops.interpolate(..., mode=\"bilinear\")` (its ResizeBilinearV2 kernel has no Int32 version)", ctx)
                return

    def _membership(self, node: ast.Compare, ctx: Context) -> Iterator[Diagnostic]:
        """`k in (1, 2, 3)` with `k` the bare `.item()` of an int32 tensor: MindSpore tests
        membership of a run-time scalar with `InSequence`, which wants every item of the
        sequence of the scalar's type, and a Python int is Int64, a float Float32 (measured,
        written/heldout38c probes `fix39a_in_*`, `fix40a_in_*`: a tuple or list display, a
        module constant, a tuple or list `__init__` stores, `not in`, a float tuple, the test
        returned, at both levels: "For InSequence, the list existing item abstract ... Int64
        ... is not same with the new added item abstract ... Int32"; an int64 or float32
        item, `int(x[0])`, `x[0].item() + 1` (the sum is Int64), two Int32 items and a dict
        compile)."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.In, ast.NotIn)):
            return
        item, seq = node.left, node.comparators[0]
        if isinstance(item, ast.BinOp) or not self._int32_item(item, ctx):
            return
        if isinstance(item, ast.Name):
            bound = analyzer(ctx).bound_value(item, ctx.function)
            if isinstance(bound, ast.BinOp):
                return  # arithmetic with a Python int makes an Int64
        if _number_sequence(seq, ctx):
            yield ctx.diagnostic(
                self,
                item,
                f"`{ctx.segment(item)}` is an Int32 scalar known only at run time; MindSpore tests it `in` "
                f"`{ctx.segment(seq)}` with InSequence, which needs every item of its type, and Python numbers are "
                "Int64 / Float32 (\"For InSequence, the list existing item abstract ... is not same with the new "
                "added item abstract ... Int32\"): use `int(...)`",
            )

    def _shape_args(self, call: ast.Call, ctx: Context) -> Iterator[ast.expr]:
        f = call.func
        if not isinstance(f, ast.Attribute) or (f.attr not in _SHAPE_FUNCS and f.attr not in _SHAPE_METHODS):
            return
        q = ctx.qualname(f) or ""
        if q.startswith("mindspore.") and f.attr in _SHAPE_FUNCS:
            at = _SHAPE_FUNCS[f.attr]
            if len(call.args) > at:
                shape = call.args[at]
                yield from shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
            return
        if f.attr in _SHAPE_METHODS and not q.startswith("mindspore."):
            for arg in call.args:
                yield from arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]

    def _int32_item(self, e: ast.expr, ctx: Context, depth: int = 0) -> bool:
        """Is `e` `t.item()` (or a name bound once to it) with `t` an int32 tensor, or a sum,
        difference or product of one with a Python number (`start + n`)? MindSpore's scalar
        arithmetic keeps the Int32 (measured, written/heldout21a probes `tc22_item_slice_*`:
        `vecs[start + n:]` with `n = lengths[i].item()` fails as `vecs[:n]` does, "Select CPU
        operator[StridedSlice] fail"; `int(lengths[i])` or an int64 tensor's item compile)."""
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)) and depth < 3:
            a = analyzer(ctx)
            return any(
                self._int32_item(side, ctx, depth + 1) and a.kind(other) != Kind.TENSOR
                for side, other in ((e.left, e.right), (e.right, e.left))
            )
        if isinstance(e, ast.Name):
            a = analyzer(ctx)
            # bound once, or (bound again elsewhere, `neg_idx` in two loops) by the plain
            # assignment straight-line code last went through before this read
            bound = a.bound_value(e, ctx.function)
            if bound is None:
                return False
            e = bound
        if not (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr == "item"
            and not e.args
            and not e.keywords
        ):
            return False
        recv = values(ctx).of(e.func.value)
        if isinstance(recv, av.Tensor) and recv.dtype is None:
            return _parameter_dtype(e.func.value, ctx) == "int32"
        return isinstance(recv, av.Tensor) and recv.dtype == "int32"

    def _int32_converted(self, e: ast.expr, ctx: Context) -> bool:
        """`int(t.item())` of an int32 tensor, or arithmetic on its `.item()`, through a name
        bound once to it: still an Int32 to the sizes of `ops.interpolate` (measured,
        written/heldout29b probe `fix30b_interp_int_item_size`: "Select CPU
        operator[ResizeBilinearV2] fail")."""
        if isinstance(e, ast.Name):
            bound = analyzer(ctx).single_assignment(e.id, ctx.function)
            if bound is None:
                return False
            e = bound
        if isinstance(e, ast.BinOp):
            # `h = t.item() * 2`: one Int32 item in the sizes is enough (measured, probe
            # `fix30b_interp_item_int32_arith`: "RealMakeTuple ... (Int64, Int32)")
            return self._int32_item(e, ctx)
        return (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Name)
            and e.func.id == "int"
            and len(e.args) == 1
            and self._int32_item(e.args[0], ctx)
        )

    def _is_tuple(self, e: ast.expr, ctx: Context) -> bool:
        return self._is_sequence(e, ctx, ast.Tuple, "tuple")

    def _is_sequence(self, e: ast.expr, ctx: Context, literal: type[ast.expr] | tuple[type[ast.expr], ...], kind: str) -> bool:
        """Is `e` a tuple (`literal` ast.Tuple, `kind` "tuple") or list display (comprehension), a module
        constant, an attribute `__init__` sets to one, or a value known to be one?"""
        if isinstance(e, literal):
            return True
        if isinstance(e, ast.Name) and not bound_locally(e.id, ctx):
            return isinstance(module_literal(e.id, ctx), literal)  # `SCALES = (1.0, 0.5)`
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
            a = analyzer(ctx)
            cls = a.owner_class(ctx.function)
            held = a.self_values(cls).get(e.attr, []) if cls is not None else []
            # `self.k = (3, 5)`; a list also from `.tolist()` of an array (ldm's
            # `self.ddim_alphas = np.cumprod(...).tolist()`: written/heldout36b case
            # `r2_ldm_item_index_python_list`, probes `fix36e_ix_tolist_*`)
            return bool(held) and all(isinstance(v, literal) or (kind == "list" and _tolist(v)) for v in held)
        v = values(ctx).of(e)
        if isinstance(v, av.Sequence):
            return v.kind == kind
        return analyzer(ctx).type_class(e) == kind

    def _report_tensor_bound(self, e: ast.expr, ctx: Context) -> Diagnostic:
        return ctx.diagnostic(
            self,
            e,
            f"`{ctx.segment(e)}` is an int32 tensor; as a slice bound of a store into a tensor MindSpore needs int64 "
            "(\"Select CPU operator[SliceToIndices] fail! Unsupported data type!\"): cast it with `.astype(ms.int64)`",
        )

    def _report(self, e: ast.expr, where: str, ctx: Context) -> Diagnostic:
        return ctx.diagnostic(
            self,
            e,
            f"`{ctx.segment(e)}` is an Int32 scalar known only at run time; MindSpore cannot use it as {where} (it needs int64): use `int(...)`",
        )


def _int32_tensor(e: ast.expr, ctx: Context) -> bool:
    """Is `e` an int32 tensor (`cy` given as `Tensor(1, ms.int32)`, `cy + 2`, a cast to
    int32)? As a slice bound of a store into a tensor (`mask[cy:cy + 2, cx:cx + 2] = 0.0`)
    its SliceToIndices kernel takes int64 bounds only, at every level (measured,
    written/heldout41d case `r2_aug_cutout_setitem_tensor_bounds` and probes `fix41d_sl_*`:
    one or two slices, a start only, a tensor value, an `@ms.jit` function, an input or an
    `argmax(...).astype(ms.int32)`; int64 tensors, python ints, a cast to int64, an int32
    index without a slice and the same slice read compile)."""
    v = values(ctx).of(e)
    return isinstance(v, av.Tensor) and v.dtype == "int32"


def _number_display(e: ast.expr | None) -> bool:
    """A tuple or list display of int and float literals (no bool)."""
    return (
        isinstance(e, (ast.Tuple, ast.List))
        and bool(e.elts)
        and all(isinstance(v, ast.Constant) and type(v.value) in (int, float) for v in e.elts)
    )


def _number_sequence(e: ast.expr, ctx: Context) -> bool:
    """Is `e` a tuple or list of Python numbers: a display, a module constant bound once to
    one, or `self.<attr>` every `__init__` store of which is one?"""
    if _number_display(e):
        return True
    if isinstance(e, ast.Name):
        return not bound_locally(e.id, ctx) and _number_display(module_literal(e.id, ctx))
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self":
        a = analyzer(ctx)
        cls = a.owner_class(ctx.function)
        held = a.self_values(cls).get(e.attr, []) if cls is not None else []
        return bool(held) and all(_number_display(v) for v in held)
    return False


def _parameter_dtype(e: ast.expr, ctx: Context) -> str | None:
    """The dtype of the data `__init__` builds the Parameter `self.<attr>` from
    (`Parameter(Tensor(np.zeros(1, np.int32)), requires_grad=False)`), when it stores it
    once. ALBEF's queue pointer: `ptr = self.queue_ptr.item()` as a slice bound fails as the
    item of any int32 tensor does (measured, written/heldout37b case
    `r2_albef_queue_ptr_parameter_item_slice` and probes `fix37d_qp_*`: "Select CPU
    operator[SliceToIndices] fail"; an int64 Parameter's item compiles)."""
    if not (type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == "self"):
        return None
    a = analyzer(ctx)
    cls = a.owner_class(ctx.function)
    stored = a.self_values(cls).get(e.attr, []) if cls is not None else []
    if len(stored) != 1 or type(stored[0]) is not ast.Call or not stored[0].args:
        return None
    made = stored[0]
    if (ctx.qualname(made.func) or "").rsplit(".", 1)[-1] != "Parameter":
        return None
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) if cls else None
    data = values(ctx).of(made.args[0], init)
    return data.dtype if isinstance(data, av.Tensor) else None
