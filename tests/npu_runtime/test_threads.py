"""The core from several host threads at once: allocator, copies, streams and handles."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from npu_runtime.core import sched, transfer
from npu_runtime.core.runtime import Runtime
from npu_runtime.errors import AclError


def test_concurrent_malloc_copy_free_keeps_accounting(rt: Runtime) -> None:
    ctx = rt.get_context()
    failures: list[str] = []
    barrier = threading.Barrier(4)

    def worker(seed: int) -> None:
        rt.set_context(ctx)
        stream = sched.create_stream(rt)
        data = np.full(4096, seed, np.uint8)
        out = np.zeros_like(data)
        src, dst = rt.hostmem.register_array(data), rt.hostmem.register_array(out)
        barrier.wait()
        for i in range(200):
            ptr = transfer.malloc(rt, 4096 + i, 0)
            transfer.memcpy_async(rt, ptr, 4096, src, 4096, 1, stream)
            transfer.memcpy(rt, dst, 4096, ptr, 4096, 2)
            if not (out == seed).all():
                failures.append(f"thread {seed} iteration {i}")
            transfer.free(rt, ptr)
        sched.synchronize_stream(rt, stream)
        sched.destroy_stream(rt, stream)

    threads = [threading.Thread(target=worker, args=(i + 1,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    mem = rt.devices[0].memory
    assert mem.used == 0 and mem.live == {}
    assert len(mem.free_blocks()) == 1  # everything merged back
    assert rt.sanitizer.findings == []


def test_threads_have_independent_recent_errors(rt: Runtime) -> None:
    from npu_runtime.core.runtime import get_runtime

    seen: dict[str, object] = {}

    def other() -> None:
        seen["other"] = get_runtime().tls.recent_msg

    with pytest.raises(AclError):
        rt.set_device(99)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert rt.tls.recent_msg is not None and seen["other"] is None
