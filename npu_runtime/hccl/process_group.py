"""`backend="hccl"` for torch.distributed: a Python ProcessGroup over a real gloo group.

    torch.distributed.init_process_group(backend="hccl")   # after `import torch_npu`

Every collective checks its signature against the other ranks first (communicator.py),
then gloo moves the data between the processes: npu tensors are lent to gloo as host views
of their device memory (or copied there and back when no view exists), and the result is
on the device when the call returns. The collective's simulated cost is charged to the
device's communication stream; the compute stream joins it when the program waits.

Registered with `torch.distributed.Backend.register_backend("hccl", ..., devices=["npu"])`
(extended API: the creator sees the group's global ranks). The ProcessGroup subclass is
the pattern torch's own tests use for Python process groups; DDP and FSDP call it through
torch's C++ ProcessGroup, so their bucketed all-reduces and shard gathers come here too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import (
    AllgatherOptions,
    AllreduceCoalescedOptions,
    AllreduceOptions,
    AllToAllOptions,
    BarrierOptions,
    BroadcastOptions,
    GatherOptions,
    ReduceOp,
    ReduceOptions,
    ReduceScatterOptions,
    ScatterOptions,
)

from npu_runtime.hccl import record
from npu_runtime.hccl.communicator import Communicator, Entry
from npu_runtime.records import SourceSite, TensorInfo

BACKEND = "hccl"
DEVICE = "npu"

# torch's stubs describe the C++ signatures, not the Python ones torch dispatches to: the
# subclasses below override by torch's runtime conventions, so they derive from Any here.
_ProcessGroup: Any = dist.ProcessGroup
_WorkBase: Any = dist.Work
_R: Any = ReduceOp.RedOpType
_REDUCE_NAMES = (
    (_R.SUM, "sum"), (_R.AVG, "avg"), (_R.PRODUCT, "prod"), (_R.MIN, "min"), (_R.MAX, "max"),
    (_R.BAND, "band"), (_R.BOR, "bor"), (_R.BXOR, "bxor"), (_R.PREMUL_SUM, "premul_sum"),
)  # fmt: skip
_MSPROF_DTYPES = {
    torch.float32: "FLOAT", torch.float16: "FLOAT16", torch.bfloat16: "BF16",
    torch.float64: "DOUBLE", torch.int32: "INT32", torch.int64: "INT64", torch.int16: "INT16",
    torch.int8: "INT8", torch.uint8: "UINT8", torch.bool: "BOOL",
}  # fmt: skip

# The torch front end installs these: a CPU tensor sharing an npu tensor's device memory
# (None when it cannot), and the device's current stream for the simulated clock.
host_view: Callable[[torch.Tensor], torch.Tensor | None] | None = None


def _reduce_name(op: Any) -> str:
    for t, name in _REDUCE_NAMES:
        if op == t:
            return name
    return str(op)


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _info(tensors: Sequence[torch.Tensor]) -> tuple[TensorInfo, ...]:
    return tuple(
        TensorInfo(tuple(t.shape), _MSPROF_DTYPES.get(t.dtype, str(t.dtype).upper()))
        for t in tensors
    )


def _nbytes(tensors: Sequence[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def npu_device_registered() -> bool:
    """Whether torch knows the `npu` device (the torch front end is loaded)."""
    return torch._C._get_privateuse1_backend_name() == DEVICE


class _Lent:
    """Host tensors gloo works on, and how their results get back to the device tensors."""

    def __init__(self, tensors: Sequence[torch.Tensor], outputs: bool) -> None:
        self.originals = list(tensors)
        self.host: list[torch.Tensor] = []
        self._back: list[tuple[torch.Tensor, torch.Tensor]] = []
        for t in tensors:
            if t.device.type == "cpu":
                self.host.append(t)
                continue
            view = host_view(t) if host_view is not None else None
            if view is None:
                view = t.detach().to("cpu")
                if outputs:
                    self._back.append((t, view))
            self.host.append(view)

    def write_back(self) -> None:
        with torch.no_grad():
            for dev_t, host_t in self._back:
                dev_t.copy_(host_t)
        self._back = []


class _HcclWork(_WorkBase):
    """What every hccl work object answers alike: no stored exception; synchronize is wait."""

    def exception(self) -> None:
        return None

    def synchronize(self) -> None:
        self.wait()


class _Work(_HcclWork):
    """A collective that has already moved its data; `wait()` makes the device wait for it."""

    def __init__(self, result: list[torch.Tensor], entry: Entry | None) -> None:
        super().__init__()
        self._result = result
        self._entry = entry
        self._future: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()
        self._future.set_result(result)

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        if self._entry is not None:
            self._entry.join()
        return True

    def get_future(self) -> torch.futures.Future[list[torch.Tensor]]:
        # DDP takes the future of each bucket's all-reduce inside backward and waits for them
        # all when backward ends (Reducer::finalize_backward): the compute stream joins then.
        if self._entry is not None:
            with contextlib.suppress(RuntimeError):  # not inside backward: nothing to queue
                torch.autograd.Variable._execution_engine.queue_callback(self._entry.join)
        return self._future

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True

    def result(self) -> list[torch.Tensor]:
        return self._result


class _P2PWork(_HcclWork):
    """A send or receive: gloo's transfer is in flight; `wait()` checks the peer and lands it."""

    def __init__(self, finish: Callable[[], Entry], tensors: list[torch.Tensor]) -> None:
        super().__init__()
        self._finish: Callable[[], Entry] | None = finish
        self._tensors = tensors

    def wait(self, timeout: timedelta = timedelta(0)) -> bool:
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish().join()
        return True

    def get_future(self) -> torch.futures.Future[list[torch.Tensor]]:
        self.wait()
        fut: torch.futures.Future[list[torch.Tensor]] = torch.futures.Future()
        fut.set_result(self._tensors)
        return fut

    def is_completed(self) -> bool:
        return self._finish is None

    def is_success(self) -> bool:
        return self._finish is None

    def result(self) -> list[torch.Tensor]:
        return self._tensors


class HcclProcessGroup(_ProcessGroup):
    """HCCL semantics and costs over a gloo process group of the same ranks."""

    def __init__(
        self,
        store: Any,
        group_rank: int,
        group_size: int,
        timeout: timedelta,
        group_key: str,
        global_ranks: Sequence[int],
    ) -> None:
        super().__init__(group_rank, group_size)
        self._gloo: Any = dist.ProcessGroupGloo(store, group_rank, group_size, timeout)
        self._comm = Communicator.create(
            store, group_rank, global_ranks, group_key, self._group_label, timeout.total_seconds()
        )

    # A Python process group has no C++ backend to keep these: torch sets them right after
    # creation, and FSDP and DeviceMesh read them back.
    _name = ""
    _desc = ""

    def _set_group_name(self, name: str) -> None:
        self._name = name

    def getGroupName(self) -> str:  # noqa: N802 (torch's name)
        return self._name

    def _set_group_desc(self, desc: str) -> None:
        self._desc = desc

    def getGroupDesc(self) -> str:  # noqa: N802 (torch's name)
        return self._desc

    @property
    def group_name(self) -> str:
        return self._name

    @property
    def group_desc(self) -> str:
        return self._desc

    @property
    def _device_types(self) -> list[torch.device]:
        # What torch asks to pick the device of object collectives and barriers.
        return [torch.device(DEVICE if npu_device_registered() else "cpu")]

    def _group_label(self) -> str:
        desc = self._desc
        return "default_group" if desc in ("", "default_pg", "undefined") else desc

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return BACKEND

    def name(self) -> str:
        return BACKEND

    # -- plumbing ----------------------------------------------------------------------
    def _device_of(self, tensors: Sequence[torch.Tensor]) -> int | None:
        for t in tensors:
            if t.device.type != "cpu" and t.device.index is not None:
                return t.device.index
        return record.default_device_id()

    def _check(self, tensors: Sequence[torch.Tensor]) -> None:
        for t in tensors:
            if t.is_sparse or (t.device.type == "cpu" and npu_device_registered()):
                raise RuntimeError("Tensors must be NPU and dense")
            if t.device.type not in ("cpu", DEVICE):
                raise RuntimeError(f"Tensors must be NPU and dense (got a {t.device.type} tensor)")
            if not (t.is_contiguous() or t.is_contiguous(memory_format=torch.channels_last)):
                raise RuntimeError("Tensors must be contiguous")  # torch_npu's check, as HCCL needs

    def _run(
        self,
        op: str,
        inputs: Sequence[torch.Tensor],
        outputs: Sequence[torch.Tensor],
        gloo: Callable[[list[torch.Tensor], list[torch.Tensor]], Any],
        *,
        nbytes: int | None = None,
        shapes: Sequence[torch.Tensor] | None = None,
        root: int | None = None,
        reduce_op: str | None = None,
        splits: tuple[list[int], list[int]] | None = None,
        result: list[torch.Tensor] | None = None,
    ) -> _Work:
        """Check, charge, then let gloo move the data (`gloo(host_inputs, host_outputs)`)."""
        self._check([*inputs, *outputs])
        site = record.user_call_site(3)
        sig_tensors = list(shapes if shapes is not None else inputs)
        dtype = _dtype(sig_tensors[0]) if sig_tensors else ""
        entry = self._comm.enter(
            op, [list(t.shape) for t in sig_tensors], dtype,
            _nbytes(inputs) if nbytes is None else nbytes,
            device_id=self._device_of([*inputs, *outputs]), root=root, reduce_op=reduce_op,
            splits=splits, site=site, inputs=_info(sig_tensors),
        )  # fmt: skip
        same = [o for o in outputs if any(o is i for i in inputs)]
        lent_in = _Lent(inputs, outputs=bool(same))
        lent_out = _Lent([o for o in outputs if not any(o is i for i in inputs)], outputs=True)
        host_in = lent_in.host
        host_out = []
        it = iter(lent_out.host)
        for o in outputs:
            match = next((h for i, h in zip(inputs, host_in, strict=True) if i is o), None)
            host_out.append(match if match is not None else next(it))
        if not any(t.is_meta for t in [*host_in, *host_out]):  # estimate mode: no values
            work = gloo(host_in, host_out)
            if work is not None:
                work.wait()
        lent_in.write_back()
        lent_out.write_back()
        return _Work(list(result if result is not None else outputs), entry)

    @staticmethod
    def _reduce(opts: Any) -> tuple[Any, str, bool]:
        """(gloo's reduce op, our name for it, whether to divide by the group size after)."""
        op = getattr(opts, "reduceOp", ReduceOp.SUM)
        name = _reduce_name(op)
        if name == "avg":  # gloo has no AVG: sum, then divide
            return ReduceOp.SUM, name, True
        if name == "premul_sum":
            raise RuntimeError("ReduceOp.PREMUL_SUM is not emulated yet by the hccl backend")
        return op, name, False

    def _avg(self, tensors: Sequence[torch.Tensor]) -> None:
        with torch.no_grad():
            for t in tensors:
                if t.is_floating_point():
                    t.div_(self.size())
                else:
                    t.floor_divide_(self.size())

    # -- collectives -------------------------------------------------------------------
    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> _Work:
        if not isinstance(opts, AllreduceOptions):
            o = AllreduceOptions()
            if opts is not None:
                o.reduceOp = opts
            opts = o
        gop, name, avg = self._reduce(opts)

        def go(host_in: list[torch.Tensor], _: list[torch.Tensor]) -> Any:
            o = AllreduceOptions()
            o.reduceOp = gop
            self._gloo.allreduce(host_in, o).wait()
            if avg:
                self._avg(host_in)

        return self._run("allreduce", tensors, tensors, go, reduce_op=name)

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> _Work:
        o = AllreduceOptions()
        if isinstance(opts, AllreduceCoalescedOptions):
            o.reduceOp = opts.reduceOp
        return self.allreduce(tensors, o)

    def broadcast(self, tensors: list[torch.Tensor], opts: Any = None) -> _Work:
        if not isinstance(opts, BroadcastOptions):
            opts = BroadcastOptions()
        root = opts.rootRank

        def go(host_in: list[torch.Tensor], _: list[torch.Tensor]) -> Any:
            o = BroadcastOptions()
            o.rootRank, o.rootTensor = root, opts.rootTensor
            return self._gloo.broadcast(host_in, o)

        return self._run("broadcast", tensors, tensors, go, root=root)

    def allgather(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        flat = [t for lst in output_lists for t in lst]
        n = len(output_lists[0]) if output_lists else 0

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            lists = [host_out[i * n : (i + 1) * n] for i in range(len(output_lists))]
            return self._gloo.allgather(lists, host_in, AllgatherOptions())

        return self._run("allgather", inputs, flat, go, nbytes=_nbytes(flat), result=flat)

    def allgather_coalesced(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        works = [
            self.allgather([out], [inp]) for out, inp in zip(output_lists, inputs, strict=True)
        ]
        return works[-1]

    def all_gather_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> _Work:
        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            return self._gloo._allgather_base(host_out[0], host_in[0], AllgatherOptions())

        return self._run("allgather", [input], [output], go, nbytes=_nbytes([output]))

    _allgather_base = all_gather_single

    def allgather_into_tensor_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        works = [self.all_gather_single(o, i) for o, i in zip(outputs, inputs, strict=True)]
        return _Work(list(outputs), works[-1]._entry if works else None)

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    def reduce_scatter(
        self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]], opts: Any = None
    ) -> _Work:
        gop, name, avg = self._reduce(opts)
        flat = [t for lst in input_lists for t in lst]
        n = len(input_lists[0]) if input_lists else 0

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            o = ReduceScatterOptions()
            o.reduceOp = gop
            lists = [host_in[i * n : (i + 1) * n] for i in range(len(input_lists))]
            self._gloo.reduce_scatter(host_out, lists, o).wait()
            if avg:
                self._avg(host_out)

        return self._run("reducescatter", flat, outputs, go, shapes=outputs, reduce_op=name,
                         nbytes=_nbytes(flat))  # fmt: skip

    def reduce_scatter_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> _Work:
        gop, name, avg = self._reduce(opts)

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            o = ReduceScatterOptions()
            o.reduceOp = gop
            self._gloo._reduce_scatter_base(host_out[0], host_in[0], o).wait()
            if avg:
                self._avg(host_out)

        return self._run("reducescatter", [input], [output], go, reduce_op=name)

    _reduce_scatter_base = reduce_scatter_single

    def reduce_scatter_tensor_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        works = [
            self.reduce_scatter_single(o, i, opts) for o, i in zip(outputs, inputs, strict=True)
        ]
        return _Work(list(outputs), works[-1]._entry if works else None)

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    def alltoall(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        in_splits = [t.numel() for t in inputs]
        out_splits = [t.numel() for t in outputs]

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            return self._gloo.alltoall(host_out, host_in, AllToAllOptions())

        return self._run("alltoall", inputs, outputs, go, splits=(in_splits, out_splits))

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int],
        input_split_sizes: list[int],
        opts: Any = None,
    ) -> _Work:
        row = input[0].numel() if input.dim() > 0 and input.shape[0] else 1
        p = self.size()
        ins = [s * row for s in input_split_sizes] or [input.numel() // p] * p
        outs = [s * row for s in output_split_sizes] or [output.numel() // p] * p

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            return self._gloo.alltoall_base(
                host_out[0], host_in[0], output_split_sizes, input_split_sizes, AllToAllOptions()
            )

        return self._run("alltoall", [input], [output], go, splits=(ins, outs))

    alltoall_base = all_to_all_single

    def barrier(self, opts: Any = None) -> _Work:
        entry = self._comm.enter(
            "barrier", [], "", 0, device_id=None, site=record.user_call_site(2)
        )
        self._gloo.barrier(BarrierOptions()).wait()
        return _Work([], entry)

    def reduce(self, tensors: list[torch.Tensor], opts: Any = None) -> _Work:
        if not isinstance(opts, ReduceOptions):
            opts = ReduceOptions()
        gop, name, avg = self._reduce(opts)
        root = opts.rootRank

        def go(host_in: list[torch.Tensor], _: list[torch.Tensor]) -> Any:
            o = ReduceOptions()
            o.reduceOp, o.rootRank, o.rootTensor = gop, root, opts.rootTensor
            self._gloo.reduce(host_in, o).wait()
            if avg and self.rank() == root:
                self._avg(host_in)

        return self._run("reduce", tensors, tensors, go, root=root, reduce_op=name)

    def gather(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: Any = None
    ) -> _Work:
        root = opts.rootRank if isinstance(opts, GatherOptions) else 0
        flat = [t for lst in output_lists for t in lst]
        n = len(output_lists[0]) if output_lists else 0

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            o = GatherOptions()
            o.rootRank = root
            lists = [host_out[i * n : (i + 1) * n] for i in range(len(output_lists))]
            return self._gloo.gather(lists, host_in, o)

        return self._run("gather", inputs, flat, go, root=root, nbytes=_nbytes(inputs) * self.size(),
                         result=flat)  # fmt: skip

    def scatter(
        self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]], opts: Any = None
    ) -> _Work:
        root = opts.rootRank if isinstance(opts, ScatterOptions) else 0
        flat = [t for lst in input_lists for t in lst]
        n = len(input_lists[0]) if input_lists else 0

        def go(host_in: list[torch.Tensor], host_out: list[torch.Tensor]) -> Any:
            o = ScatterOptions()
            o.rootRank = root
            lists = [host_in[i * n : (i + 1) * n] for i in range(len(input_lists))]
            return self._gloo.scatter(host_out, lists, o)

        return self._run("scatter", flat, outputs, go, shapes=outputs, root=root,
                         nbytes=_nbytes(outputs) * self.size())  # fmt: skip

    # -- point to point ----------------------------------------------------------------
    def _p2p(self, role: str, tensors: list[torch.Tensor], peer: int, tag: int) -> _P2PWork:
        self._check(tensors)
        if not 0 <= peer < self.size() or peer == self.rank():
            raise ValueError(f"invalid {'destination' if role == 'send' else 'source'} rank {peer}")
        site: SourceSite | None = record.user_call_site(3)
        device_id = self._device_of(tensors)
        shapes = [list(t.shape) for t in tensors]
        sig, n, arrival = self._comm.post_p2p(
            role, peer, shapes, _dtype(tensors[0]), device_id, site
        )
        lent = _Lent(tensors, outputs=role == "recv")
        gloo_work = (self._gloo.send if role == "send" else self._gloo.recv)(lent.host, peer, tag)

        def finish() -> Entry:
            entry = self._comm.finish_p2p(role, peer, sig, n, arrival, _nbytes(tensors), device_id,
                                          site, _info(tensors))  # fmt: skip
            gloo_work.wait()
            lent.write_back()
            return entry

        return _P2PWork(finish, tensors)

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> _P2PWork:
        return self._p2p("send", tensors, dst, tag)

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> _P2PWork:
        return self._p2p("recv", tensors, src, tag)

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> _P2PWork:
        raise RuntimeError("HCCL does not support receiving from any source: pass src")


def _create(backend_opts: Any, pg_options: Any) -> HcclProcessGroup:
    ranks = list(backend_opts.global_ranks_in_group) or list(range(backend_opts.group_size))
    return HcclProcessGroup(
        backend_opts.store,
        backend_opts.group_rank,
        backend_opts.group_size,
        backend_opts.timeout,
        str(backend_opts.group_id),
        ranks,
    )


def register(devices: Sequence[str] | None = None) -> None:
    """Make `backend="hccl"` available (idempotent); torch_npu's import calls this."""
    global host_view
    if npu_device_registered():
        from npu_runtime.torch_npu import _backend

        # npu tensors lend gloo their device memory; collectives follow torch's current
        # stream and device (torch.npu.set_device / torch.npu.stream).
        host_view = _backend.host_view
        record.current_stream = lambda dev: _backend.stream_for(dev.id)
        record.default_device = lambda: _backend.state.device
        record.fallback_site = lambda: _backend.last_site
    if BACKEND.upper() in dist.Backend._plugins:
        return
    devs = list(devices) if devices is not None else _default_devices()
    dist.Backend.register_backend(BACKEND, _create, extended_api=True, devices=devs)


def _default_devices() -> list[str]:
    # Before the npu device exists (a CPU-only process), hccl serves CPU tensors so a script
    # can still be checked and costed; with torch_npu loaded it serves npu tensors only.
    env = os.environ.get("NPU_HCCL_DEVICES")
    if env:
        return [d.strip() for d in env.split(",") if d.strip()]
    return [DEVICE] if npu_device_registered() else ["cpu"]
