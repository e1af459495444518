"""Models loaded on an emulated device: their memory, descriptions and dynamic gears
(execution is npu_runtime.model.run).

Every failure raises AclError through `rt.fail` with the code GE/ACL return for it:
145003 for a model id that is not loaded, 145013 for a batch size, image size or dims set
that was not compiled, 245000 when the device has no room for the model.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_runtime import numerics
from npu_runtime.acl import _objects
from npu_runtime.core.device import Device
from npu_runtime.core.memory import OutOfMemory
from npu_runtime.core.runtime import Runtime, get_runtime
from npu_runtime.errors import codes
from npu_runtime.model import om
from npu_runtime.model.executor import Executor
from npu_runtime.model.pricing import NodeTask, price
from npu_runtime.records import SourceSite

_rt: Runtime = get_runtime()
HUGE_FIRST = 0


@dataclass(frozen=True)
class IoDesc:
    """One model input or output as the description getters report it."""

    name: str
    dtype: np.dtype
    acl_dtype: int
    format: int
    dims: tuple[int, ...]  # -1 where a dynamic gear decides
    gear_shapes: tuple[tuple[int, ...], ...]
    dynamic_data: bool = False

    def nbytes(self, gear: int) -> int:
        return math.prod(self.gear_shapes[gear]) * self.dtype.itemsize

    @property
    def max_bytes(self) -> int:
        return max(self.nbytes(g) for g in range(len(self.gear_shapes)))

    @classmethod
    def of(cls, raw: dict[str, Any]) -> IoDesc:
        dt = np.dtype(raw["dtype"])
        d = numerics.by_numpy(dt)
        return cls(
            raw["name"],
            dt,
            d.acl if d is not None else -1,
            int(raw["format"]),
            tuple(raw["dims"]),
            tuple(tuple(s) for s in raw["gear_shapes"]),
            bool(raw.get("dynamic_data", False)),
        )


@dataclass(eq=False)
class Model:
    """A loaded offline model."""

    id: int
    header: dict[str, Any]
    device: Device
    executor: Executor
    inputs: list[IoDesc]
    outputs: list[IoDesc]
    gears: list[list[int]]
    kind: str  # "", "batch", "hw", "dims"
    work_size: int
    weight_size: int
    owned: list[int] = field(default_factory=list)  # device blocks the load allocated
    cur_gear: int = 0
    _tasks: dict[int, list[NodeTask]] = field(default_factory=dict)

    @property
    def data_inputs(self) -> list[IoDesc]:
        return [i for i in self.inputs if not i.dynamic_data]

    def tasks(self, gear: int) -> list[NodeTask]:
        """The per-node records of `gear`, priced once for the device's profile."""
        got = self._tasks.get(gear)
        if got is None:
            got = self._tasks[gear] = price(self.header, gear, self.device)
        return got


class ModelStore:
    """Loaded models by id (ids count from 1 per process, as GE's do)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.models: dict[int, Model] = {}
        self._ids = itertools.count(1)

    def find(self, model_id: int) -> Model | None:
        """The loaded model `model_id` (None when never loaded, unloaded, or its device
        was reset)."""
        m = self.models.get(model_id)
        return m if m is not None and _rt.devices.get(m.device.id) is m.device else None

    def get(self, model_id: int, api: str) -> Model:
        m = self.find(model_id)
        if m is None:
            raise _rt.fail(
                codes.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID,
                api,
                f"Invalid model id {model_id}, check whether model has been loaded or not",
            )
        return m

    def new_id(self) -> int:
        """A fresh id; models whose device was reset (or the runtime) are forgotten first,
        so they do not keep a closed device's memory alive."""
        for mid, m in list(self.models.items()):
            if _rt.devices.get(m.device.id) is not m.device:
                del self.models[mid]
        return next(self._ids)


store = ModelStore()


# -- loading ------------------------------------------------------------------------------------
def read_file(path: str, api: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise _rt.fail(
            codes.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, api, f"model file {path!r} does not exist"
        ) from None
    except OSError as exc:
        raise _rt.fail(
            codes.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID,
            api,
            f"cannot read model file {path!r}: {exc.strerror}",
        ) from None


def read_host(ptr: int, size: int, api: str) -> bytes:
    """`size` bytes of model data at `ptr` (host memory the process owns, or device memory)."""
    if ptr == 0 or size == 0:
        raise _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, "model data is NULL or empty")
    if _rt.memory.is_device(ptr):
        try:
            return bytes(_rt.memory.view(ptr, size))
        except ValueError as exc:
            raise _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, str(exc)) from None
    if not _rt.hostmem.contains(ptr, size):
        raise _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"host range 0x{ptr:x}+{size} is not memory this process allocated",
        )
    return ctypes.string_at(ptr, size)


def parse(data: bytes, api: str) -> om.OmFile:
    try:
        return om.loads(data)
    except om.OmFormatError as exc:
        raise _rt.fail(exc.code, api, exc.message) from None


def sizes(f: om.OmFile) -> tuple[int, int]:
    """(work size, weight size) the model needs on the device."""
    return int(f.header["work_bytes"]), int(f.header["weight_bytes"])


def load(
    f: om.OmFile,
    api: str,
    work: tuple[int, int] | None = None,
    weight: tuple[int, int] | None = None,
) -> int:
    """Load on the current device; with `work`/`weight` (ptr, size) the caller's memory is
    used, otherwise the load allocates it in HBM."""
    dev = _rt.current_device(api)
    h = f.header
    if h.get("profile") != dev.profile.name:
        raise _rt.fail(
            codes.ACL_ERROR_GE_PARAM_INVALID,
            api,
            f"the model was compiled for {h.get('soc_version')} ({h.get('profile')}); this "
            f"device is {dev.profile.name}: compile it again with --soc_version for this SoC "
            "or run with a matching --device",
        )
    work_size, weight_size = sizes(f)
    owned: list[int] = []
    site = user_site_for_alloc()
    for given, need, what in ((work, work_size, "work"), (weight, weight_size, "weight")):
        if given is None:
            try:
                owned.append(dev.memory.malloc(max(need, 1), HUGE_FIRST, site).addr)
            except OutOfMemory as oom:
                for addr in owned:
                    dev.memory.free(addr)
                raise _rt.fail(
                    codes.ACL_ERROR_GE_MEMORY_ALLOCATION,
                    api,
                    f"cannot allocate the model's {what} memory ({need} bytes) on device "
                    f"{dev.id}: {oom.free} bytes free, largest free block {oom.largest} bytes",
                ) from None
            continue
        ptr, size = given
        if ptr == 0:
            raise _rt.fail(
                codes.ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID, api, f"{what} memory pointer is NULL"
            )
        if size < need:
            raise _rt.fail(
                codes.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID,
                api,
                f"{what} memory of {size} bytes is smaller than the {need} bytes "
                "acl.mdl.query_size reports",
            )
        try:
            dev.memory.check_range(ptr, need)
        except ValueError as exc:
            raise _rt.fail(codes.ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID, api, str(exc)) from None
    try:
        executor = Executor(f.graph, [o["name"] for o in h["outputs"]])
    except Exception as exc:  # noqa: BLE001 - a graph the executor refuses is a bad model
        for addr in owned:
            dev.memory.free(addr)
        raise _rt.fail(
            codes.ACL_ERROR_GE_LOAD_MODEL,
            api,
            f"the model's graph cannot be loaded: {exc}",
        ) from None
    dyn = h.get("dynamic") or {}
    with store.lock:
        model = Model(
            store.new_id(),
            h,
            dev,
            executor,
            [IoDesc.of(i) for i in h["inputs"]],
            [IoDesc.of(o) for o in h["outputs"]],
            [list(g) for g in dyn.get("gears", [])],
            str(dyn.get("kind", "")),
            work_size,
            weight_size,
            owned,
        )
        store.models[model.id] = model
    return model.id


def user_site_for_alloc() -> SourceSite | None:
    from npu_runtime.sites import user_site

    return user_site(2) if _rt.sanitizer.enabled else None


def unload(model_id: int, api: str = "aclmdlUnload") -> None:
    m = store.get(model_id, api)
    with store.lock:
        store.models.pop(model_id, None)
    for addr in m.owned:
        m.device.memory.free(addr)


# -- dynamic gears ------------------------------------------------------------------------------
def _dynamic_buffer(ds: int, index: int, api: str) -> _objects.DataBuffer:
    d = _objects.dataset(ds)
    if d is None:
        raise _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"0x{ds:x} is not a dataset")
    if not 0 <= index < len(d.buffers):
        raise _rt.fail(
            codes.ACL_ERROR_INVALID_PARAM,
            api,
            f"index {index} is out of range: the dataset has {len(d.buffers)} buffers",
        )
    b = _objects.data_buffer(d.buffers[index])
    if b is None or b.addr == 0:
        raise _rt.fail(
            codes.ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID,
            api,
            f"buffer {index} of the dataset has no device address",
        )
    return b


def set_gear(model_id: int, ds: int, index: int, values: list[int], kind: str, api: str) -> None:
    """Choose the gear matching `values` and write them into the dynamic input buffer."""
    m = store.get(model_id, api)
    b = _dynamic_buffer(ds, index, api)
    width = len(values)
    if b.size < width * 4:
        raise _rt.fail(
            codes.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
            api,
            f"Dynamic input size [{b.size}] is less than [{width * 4}]",
        )
    what = {"batch": "batch size", "hw": "image size", "dims": "dims"}[kind]
    if m.kind != kind or values not in m.gears:
        compiled = (
            f"the model was compiled with {m.kind or 'no'} gears {m.gears}"
            if m.kind
            else "the model was compiled without dynamic gears"
        )
        raise _rt.fail(
            codes.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID,
            api,
            f"The current dynamic input ({what} {values}) does not match the gear of the "
            f"model (id:{model_id}); {compiled}",
        )
    item = 8 if b.size >= width * 8 else 4
    raw = np.asarray(values, np.int64 if item == 8 else np.int32).tobytes()
    try:
        _rt.memory.view(b.addr, len(raw))[:] = np.frombuffer(raw, np.uint8)
    except ValueError as exc:
        raise _rt.fail(codes.ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID, api, str(exc)) from None
    m.cur_gear = m.gears.index(values)


def dims_gear_values(m: Model, dims: list[int], api: str) -> list[int]:
    """The dynamic values of a full dims list (all data inputs' dims, in order)."""
    declared = [d for i in m.data_inputs for d in i.dims]
    if len(dims) != len(declared):
        raise _rt.fail(
            codes.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
            api,
            f"Dynamic input size [{len(dims)}] is not equal with all data dims size "
            f"[{len(declared)}]",
        )
    out: list[int] = []
    for i, (d, want) in enumerate(zip(dims, declared, strict=True)):
        if want < 0:
            out.append(int(d))
        elif d != want:
            raise _rt.fail(
                codes.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
                api,
                f"Static dims should be same, index:{i} value:{d} should be {want}",
            )
    return out
