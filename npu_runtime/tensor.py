"""The Pythonic layer's device tensor and its ops, for notebooks and tests.

A `Tensor` lives in emulated device memory (the same memory pyACL scripts allocate), so
ops on it go through the same registry, cost model, streams and profiler records as
`acl.op.execute_v2`. Ops are queued on the current context's default stream; `.numpy()`
synchronises it first, so a device-side fault (or a NaN/Inf under the check mode) raises
AclError there, naming the line that launched the failing op.

    >>> import numpy as np, npu_runtime as npu
    >>> a = npu.Tensor(np.ones((2, 3), np.float16))
    >>> (a @ a.T).numpy()
    array([[3., 3.], [3., 3.]], dtype=float16)

The first tensor initialises the runtime and sets device 0 when the program has not.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.core import sched, transfer
from npu_runtime.core.device import Device
from npu_runtime.core.faults import injector
from npu_runtime.core.memory import DeviceMemory, OutOfMemory
from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.ops import OpError, Spec
from npu_runtime.ops import dispatch as _dispatch
from npu_runtime.records import SourceSite
from npu_runtime.sites import user_site

__all__ = ["Tensor", "call", "empty_cache", "memory_allocated", "memory_reserved"]

_rt = get_runtime()  # always the same object (reset() clears it in place)
_spec_of = operator.attrgetter("_spec")
_addr_of = operator.attrgetter("addr")
DTypeLike = Any  # numpy dtype, numpy/ml_dtypes type, or our name ("float16", "bfloat16")
_H2D, _D2H = 1, 2


def _declared(dtype: DTypeLike) -> np.dtype:
    """The device dtype the program asks for."""
    if isinstance(dtype, str):
        return numerics.by_name(dtype).np
    dt = np.dtype(dtype)
    if numerics.by_numpy(dt) is None:
        raise TypeError(f"the device has no {dt} type")
    return dt


def _dtype(dtype: DTypeLike) -> np.dtype:
    """The dtype a tensor asked for as `dtype` is stored in (wider in reference numerics)."""
    return numerics.storage_dtype(_declared(dtype))


def _runtime(device: int | None = None) -> Runtime:
    """The runtime with a current context: initialised and device set on first use."""
    rt = _rt
    ctx = rt.tls.context
    if ctx is None or not ctx.alive:
        if not rt.initialized:
            rt.init()
        rt.set_device(device or 0)
    return rt


class Tensor:
    """A tensor in emulated NPU memory: `shape`, `dtype`, `device`, and `.numpy()`."""

    __slots__ = ("shape", "dtype", "declared", "_dev", "_rt", "_spec", "addr", "__weakref__")

    shape: tuple[int, ...]
    dtype: np.dtype
    # The dtype the program asked for: `dtype` differs only in reference numerics
    # (numerics.set_numerics), where half-precision tensors are stored wider.
    declared: np.dtype
    addr: int  # device address of the first element

    def __init__(
        self, data: Any, dtype: DTypeLike | None = None, device: int | None = None
    ) -> None:
        """A device tensor holding `data` (array-like), copied host-to-device.

        Python floats become float32 and Python ints int32, as on the device; with `dtype`
        the values are rounded to it as the device would store them.
        """
        _runtime(device)
        arr = np.asarray(data)
        if dtype is not None:
            arr = numerics.round_to(arr, _declared(dtype))
        elif arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and not isinstance(data, np.ndarray):
            arr = arr.astype(np.int32)
        declared = arr.dtype
        # Values enter as declared (so NPU and reference runs start from the same inputs);
        # a reference run then stores them wider.
        arr = np.ascontiguousarray(numerics.round_to(arr, numerics.storage_dtype(declared)))
        self._allocate(arr.shape, arr.dtype)
        self.declared = declared
        if arr.nbytes:
            rt = get_runtime()
            ptr = rt.hostmem.register_array(arr)
            transfer.memcpy(rt, self.addr, self.nbytes, ptr, arr.nbytes, _H2D)

    @classmethod
    def empty(cls, shape: Sequence[int], dtype: DTypeLike = np.float32) -> Tensor:
        """An uninitialised tensor on the current device (what ops write their outputs to)."""
        t = cls.__new__(cls)
        _runtime()
        t._allocate(tuple(int(d) for d in shape), _dtype(dtype))
        t.declared = _declared(dtype)
        return t

    def _allocate(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        rt = get_runtime()
        self.shape = shape
        self.dtype = self.declared = dtype
        dev = rt.current_device("aclrtMalloc")
        self._dev = dev
        self._rt = rt
        self._spec = _dispatch.intern(Spec(shape, dtype))  # plan keys compare by identity
        self.addr = transfer.malloc(rt, max(self.nbytes, 1), 0)

    def __del__(self) -> None:
        # __del__ rather than weakref.finalize: it costs nothing until the tensor dies.
        if getattr(self, "addr", None) is not None:
            try:
                dev = self._dev
                # After a runtime or device reset the memory is gone already: nothing to free.
                if self._rt.devices.get(dev.id) is dev:
                    # into the caching allocator: the next result of this size reuses it
                    dev.memory.free_cached(self.addr)
            except Exception:  # interpreter shutdown: modules may already be torn down
                pass

    # -- description --------------------------------------------------------------------
    @property
    def device(self) -> str:
        return f"npu:{self._dev.id}"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def spec(self) -> Spec:
        return self._spec

    def __repr__(self) -> str:
        name = numerics.by_numpy(self.dtype)
        return f"Tensor(shape={list(self.shape)}, dtype={name.name if name else self.dtype}, device={self.device!r})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- host transfer ------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host copy, after synchronising the stream (device faults raise AclError here)."""
        rt = get_runtime()
        sched.synchronize_stream(rt, 0, "aclrtSynchronizeStream")
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            ptr = rt.hostmem.register_array(out)
            transfer.memcpy(rt, ptr, out.nbytes, self.addr, self.nbytes, _D2H)
        return out

    to_host = numpy

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    # -- operators ----------------------------------------------------------------------
    def _other(self, v: Any) -> Tensor:
        return v if isinstance(v, Tensor) else Tensor(np.asarray(v, self.declared))

    def __add__(self, o: Any) -> Tensor:
        return _call("Add", (self, o if isinstance(o, Tensor) else self._other(o)), {})

    def __radd__(self, o: Any) -> Tensor:
        return _call("Add", (o if isinstance(o, Tensor) else self._other(o), self), {})

    def __sub__(self, o: Any) -> Tensor:
        return _call("Sub", (self, o if isinstance(o, Tensor) else self._other(o)), {})

    def __rsub__(self, o: Any) -> Tensor:
        return _call("Sub", (o if isinstance(o, Tensor) else self._other(o), self), {})

    def __mul__(self, o: Any) -> Tensor:
        return _call("Mul", (self, o if isinstance(o, Tensor) else self._other(o)), {})

    def __rmul__(self, o: Any) -> Tensor:
        return _call("Mul", (o if isinstance(o, Tensor) else self._other(o), self), {})

    def __truediv__(self, o: Any) -> Tensor:
        return _call("Div", (self, o if isinstance(o, Tensor) else self._other(o)), {})

    def __rtruediv__(self, o: Any) -> Tensor:
        return _call("Div", (o if isinstance(o, Tensor) else self._other(o), self), {})

    def __neg__(self) -> Tensor:
        return call("Mul", self, self._other(-1))

    def __matmul__(self, o: Tensor) -> Tensor:
        return matmul(self, o)

    @property
    def T(self) -> Tensor:  # noqa: N802 (numpy's name)
        return transpose(self)

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """Same elements in a new shape: `t.reshape(2, -1)` or `t.reshape([2, -1])`."""
        first = shape[0] if len(shape) == 1 else None
        dims = list(first) if isinstance(first, (list, tuple)) else list(shape)
        result: Tensor = call("Reshape", self, shape=[int(d) for d in dims])  # type: ignore[arg-type]
        return result

    def astype(self, dtype: DTypeLike) -> Tensor:
        return cast(self, dtype)

    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return reduce_sum(self, axis, keepdims)

    def mean(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return reduce_mean(self, axis, keepdims)

    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return reduce_max(self, axis, keepdims)


def call(op_type: str, *inputs: Tensor, **attrs: Any) -> Any:
    """Run registry op `op_type` on device tensors: one Tensor, or a tuple for several outputs.

    Bad input raises AclError with the code pyACL would return (e.g. 100021 for shapes
    that do not match); the op itself runs on the default stream.
    """
    return _call(op_type, inputs, attrs)


def _call(
    op_type: str,
    inputs: Sequence[Tensor],
    attrs: dict[str, Any],
    out_declared: np.dtype | None = None,
) -> Any:
    """`call`, with the declared dtype of the results when the program named one (a cast)."""
    rt = _runtime()
    specs = list(map(_spec_of, inputs))
    try:
        p = _dispatch.plan(op_type, specs, attrs, rt.profile)
    except OpError as e:
        raise rt.fail(e.code, op_type, e.message) from None
    if numerics._mode == "npu" and p.nd_outputs is not None:
        # One frame walk for the user's line: the results' alloc site and the launch site.
        # It starts at our caller (an operator or `call`, never the user's line): CPython
        # builds a frame object for each frame the walk visits.
        site = user_site(2)
        ctx = rt.tls.context  # _runtime() made sure there is a live one
        assert ctx is not None
        dev = ctx.device
        in_addrs = list(map(_addr_of, inputs))
        if len(p.nd_outputs) == 1:  # the usual op: no list of results to build and unpack
            r = _result(rt, dev, p.nd_outputs[0], site)
            _dispatch.launch(p, specs, in_addrs, [r.addr], attrs, 0, site)
            return r
        results = [_result(rt, dev, s, site) for s in p.nd_outputs]
        _dispatch.launch(p, specs, in_addrs, list(map(_addr_of, results)), attrs, 0, site)
        return tuple(results)
    results = [Tensor.empty(s.shape, s.dtype) for s in p.outputs]
    if numerics.numerics_mode() == "npu":
        _dispatch.launch(p, specs, [t.addr for t in inputs], [r.addr for r in results], attrs, 0)
    else:  # reference numerics: tell dumps the dtypes the program declared
        for r in results:
            r.declared = out_declared or _result_declared(inputs, r)
        token = numerics.declared.set(([t.declared for t in inputs], [r.declared for r in results]))
        try:
            _dispatch.launch(
                p, specs, [t.addr for t in inputs], [r.addr for r in results], attrs, 0
            )
        finally:
            numerics.declared.reset(token)
    return results[0] if len(results) == 1 else tuple(results)


def _result(rt: Runtime, dev: Device, s: Spec, site: SourceSite | None) -> Tensor:
    """`Tensor.empty(s.shape, s.dtype)` for an op result in NPU numerics, where the stored
    type is the declared one: the plan's spec is reused and the allocation goes straight
    to the device's allocator (with `site` as its sanitizer alloc site) unless an injection
    wants the full call."""
    t = Tensor.__new__(Tensor)
    t.shape = s.shape
    t.dtype = t.declared = s.dtype
    t._dev = dev
    t._rt = rt
    t._spec = s
    size = s.nbytes or 1
    if injector.active:
        t.addr = transfer.malloc(rt, size, 0)
    else:
        try:
            t.addr = dev.memory.malloc_cached(size, site if rt.sanitizer.enabled else None).addr
        except OutOfMemory:  # the full call fails the same way and reports it
            t.addr = transfer.malloc(rt, size, 0)
    return t


def _result_declared(inputs: Sequence[Tensor], r: Tensor) -> np.dtype:
    """An op result's declared dtype in reference numerics: the declared type of the first
    float input when the result is a float (ops keep their input's type)."""
    if numerics.is_float(r.dtype):
        for t in inputs:
            if numerics.is_float(t.dtype):
                return t.declared
    return r.dtype


# -- memory figures, as torch_npu reports them -------------------------------------------
def _memory(device: int | None) -> DeviceMemory | None:
    """The device memory of `device` (default: the current one); None if it is not open."""
    rt = _rt
    if device is None:
        ctx = rt.tls.context
        return ctx.device.memory if ctx is not None and ctx.alive else None
    dev = rt.devices.get(int(device))
    return dev.memory if dev is not None else None


def memory_allocated(device: int | None = None) -> int:
    """Bytes of device memory in live allocations (tensors and pyACL buffers), as placed."""
    mem = _memory(device)
    return mem.allocated_bytes if mem is not None else 0


def memory_reserved(device: int | None = None) -> int:
    """`memory_allocated` plus the blocks dead tensors left in the caching allocator for
    reuse: what the process holds, so what acl.rt.get_mem_info does not report as free."""
    mem = _memory(device)
    return mem.used if mem is not None else 0


def empty_cache(device: int | None = None) -> int:
    """Return the caching allocator's unused blocks to the device; the bytes released.

    The host pages kept resident under recently freed large blocks go back to the OS too
    (that changes no device figure, only this process's memory use)."""
    mem = _memory(device)
    if mem is None:
        return 0
    mem.release_resident()
    return mem.release_cache()


# -- named ops (thin wrappers over `call`) ---------------------------------------------------
def add(a: Tensor, b: Tensor) -> Tensor:
    return call("Add", a, b)


def sub(a: Tensor, b: Tensor) -> Tensor:
    return call("Sub", a, b)


def mul(a: Tensor, b: Tensor) -> Tensor:
    return call("Mul", a, b)


def div(a: Tensor, b: Tensor) -> Tensor:
    return call("Div", a, b)


def relu(x: Tensor) -> Tensor:
    return call("Relu", x)


def gelu(x: Tensor) -> Tensor:
    return call("Gelu", x)


def silu(x: Tensor) -> Tensor:
    return call("Silu", x)


def sigmoid(x: Tensor) -> Tensor:
    return call("Sigmoid", x)


def tanh(x: Tensor) -> Tensor:
    return call("Tanh", x)


def cast(x: Tensor, dtype: DTypeLike) -> Tensor:
    row = numerics.by_numpy(_dtype(dtype))  # the stored type: wider in reference numerics
    assert row is not None
    out: Tensor = _call("Cast", (x,), {"dst_type": row.acl}, _declared(dtype))
    return out


def matmul(
    a: Tensor,
    b: Tensor,
    transpose_a: bool = False,
    transpose_b: bool = False,
    bias: Tensor | None = None,
) -> Tensor:
    """a @ b on the Cube: MatMul for 2-D operands, BatchMatMul otherwise."""
    extra = (bias,) if bias is not None else ()
    if a.ndim == 2 and b.ndim == 2:
        return call("MatMul", a, b, *extra, transpose_x1=transpose_a, transpose_x2=transpose_b)
    return call("BatchMatMul", a, b, *extra, adj_x1=transpose_a, adj_x2=transpose_b)


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    return call("SoftmaxV2", x, axes=[axis])


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    return call("LogSoftmaxV2", x, axes=[axis])


def layer_norm(
    x: Tensor, gamma: Tensor, beta: Tensor, begin_norm_axis: int = -1, epsilon: float = 1e-5
) -> Tensor:
    """Normalise over the dims from `begin_norm_axis`; returns y (mean/variance dropped)."""
    y, _, _ = call(
        "LayerNorm", x, gamma, beta,
        begin_norm_axis=begin_norm_axis, begin_params_axis=begin_norm_axis, epsilon=epsilon,
    )  # fmt: skip
    return y


def rms_norm(x: Tensor, gamma: Tensor, epsilon: float = 1e-6) -> Tensor:
    y, _ = call("RmsNorm", x, gamma, epsilon=epsilon)
    return y


def _axes(axis: int | Sequence[int] | None) -> list[int]:
    if axis is None:
        return []
    return [int(axis)] if isinstance(axis, int) else [int(a) for a in axis]


def reduce_sum(
    x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False
) -> Tensor:
    return call("ReduceSum", x, axes=_axes(axis), keep_dims=keepdims)


def reduce_mean(
    x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False
) -> Tensor:
    return call("ReduceMean", x, axes=_axes(axis), keep_dims=keepdims)


def reduce_max(
    x: Tensor, axis: int | Sequence[int] | None = None, keepdims: bool = False
) -> Tensor:
    return call("ReduceMax", x, axes=_axes(axis), keep_dims=keepdims)


def transpose(x: Tensor, perm: Sequence[int] | None = None) -> Tensor:
    return call("Transpose", x, perm=list(perm) if perm is not None else list(range(x.ndim))[::-1])


def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    return x.reshape(list(shape))


def concat(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    return call("ConcatD", *tensors, concat_dim=axis)


def split(x: Tensor, num: int, axis: int = 0) -> tuple[Tensor, ...]:
    out = call("SplitD", x, split_dim=axis, num_split=num)
    return out if isinstance(out, tuple) else (out,)


def gather(x: Tensor, indices: Tensor, axis: int = 0) -> Tensor:
    return call("GatherV2", x, indices, axis=axis)


def embedding(weight: Tensor, indices: Tensor) -> Tensor:
    return call("Embedding", weight, indices)


def _pair(v: int | Sequence[int]) -> list[int]:
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> Tensor:
    """NCHW convolution; `padding` is one int, (h, w), or (top, bottom, left, right)."""
    p = _pair(padding) if isinstance(padding, int) or len(padding) == 2 else list(padding)
    pads = [p[0], p[0], p[1], p[1]] if len(p) == 2 else p
    extra = (bias,) if bias is not None else ()
    return call(
        "Conv2D", x, weight, *extra,
        strides=[1, 1, *_pair(stride)], pads=pads, dilations=[1, 1, *_pair(dilation)], groups=groups,
    )  # fmt: skip


def _pool(
    op_type: str,
    x: Tensor,
    kernel: int | Sequence[int],
    stride: int | Sequence[int] | None,
    padding: str,
) -> Tensor:
    k = _pair(kernel)
    return call(op_type, x, ksize=[1, 1, *k], strides=[1, 1, *_pair(stride or k)], padding=padding)


def max_pool(
    x: Tensor,
    kernel: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: str = "VALID",
) -> Tensor:
    return _pool("MaxPool", x, kernel, stride, padding)


def avg_pool(
    x: Tensor,
    kernel: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: str = "VALID",
) -> Tensor:
    return _pool("AvgPool", x, kernel, stride, padding)


def npu_fusion_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    head_num: int,
    input_layout: str,
    atten_mask: Tensor | None = None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tockens: int = 2147483647,
    next_tockens: int = 2147483647,
    sparse_mode: int = 0,
) -> tuple[Tensor, Tensor, Tensor]:
    """torch_npu.npu_fusion_attention: (attention_out, softmax_max, softmax_sum)."""
    extra = (atten_mask,) if atten_mask is not None else ()
    return call(
        "FlashAttentionScore", query, key, value, *extra,
        head_num=head_num, input_layout=input_layout, scale_value=scale, keep_prob=keep_prob,
        pre_tockens=pre_tockens, next_tockens=next_tockens, sparse_mode=sparse_mode,
    )  # fmt: skip
