"""Streams and events on the simulated clock: query, synchronise, elapsed time, waits, callbacks."""

from __future__ import annotations

import threading
from types import ModuleType

import numpy as np
import pytest

from npu_runtime.core import hooks
from npu_runtime.core.launch import Cost, submit
from npu_runtime.core.runtime import Runtime
from npu_runtime.records import EventWait, WorkRecord

# pyACL itself warns that numpy_to_ptr is deprecated; the samples still use it.
pytestmark = pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")

COMPLETE, NOT_READY = 0, 1


@pytest.fixture
def dev(acl: ModuleType) -> ModuleType:
    acl.init()
    acl.rt.set_device(0)
    return acl


def _work(stream: int, us: float, op: str = "Busy") -> WorkRecord:
    return submit(
        stream, name=op, op_type=op, cost=Cost(duration_us=us, bound="cube"), compute=lambda: None
    )


def test_query_before_and_after_sync(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    _work(s, 500.0)
    assert acl.rt.record_event(e, s) == 0
    assert acl.rt.stream_query(s) == (NOT_READY, 0)
    assert acl.rt.query_event(e) == (NOT_READY, 0)
    assert acl.rt.query_event_status(e) == (0, 0)  # aclrtEventRecordedStatus: 0 = NOT_READY
    assert acl.rt.synchronize_event(e) == 0
    assert acl.rt.query_event(e) == (COMPLETE, 0)
    assert acl.rt.query_event_status(e) == (1, 0)
    assert acl.rt.stream_query(s) == (COMPLETE, 0)


def test_elapsed_time_measures_the_work_between_events(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    start, _ = acl.rt.create_event()
    end, _ = acl.rt.create_event()
    acl.rt.record_event(start, s)
    recs = [_work(s, 250.0), _work(s, 750.0)]
    acl.rt.record_event(end, s)
    acl.rt.synchronize_stream(s)
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == 0
    assert ms == pytest.approx((recs[-1].end_us - recs[0].start_us) / 1000.0, rel=1e-3)
    assert ms >= 1.0
    assert recs[1].start_us >= recs[0].end_us  # in order on one stream


def test_elapsed_time_of_unrecorded_event_is_507000(dev: ModuleType) -> None:
    acl = dev
    a, _ = acl.rt.create_event()
    b, _ = acl.rt.create_event()
    acl.rt.record_event(a, 0)
    assert acl.rt.event_elapsed_time(a, b) == (0.0, 507000)
    assert acl.rt.record_event(0, 0) == 100000
    assert acl.rt.destroy_event(0) == 100000
    assert acl.rt.destroy_event(a) == 0
    assert acl.rt.record_event(a, 0) == 107000


def test_stream_wait_event_orders_streams(dev: ModuleType) -> None:
    acl = dev
    producer, _ = acl.rt.create_stream()
    consumer, _ = acl.rt.create_stream()
    ready, _ = acl.rt.create_event()
    waits: list[EventWait] = []
    hooks.add_wait_listener(waits.append)
    try:
        long = _work(producer, 1000.0)
        acl.rt.record_event(ready, producer)
        assert acl.rt.stream_wait_event(consumer, ready) == 0
        after = _work(consumer, 10.0)
    finally:
        hooks.remove_wait_listener(waits.append)
    assert after.start_us >= long.end_us
    assert after.stream != long.stream
    assert len(waits) == 1 and waits[0].wait_end_us == pytest.approx(long.end_us)


def test_independent_streams_overlap(dev: ModuleType) -> None:
    acl = dev
    a, _ = acl.rt.create_stream()
    b, _ = acl.rt.create_stream()
    ra = _work(a, 1000.0)
    rb = _work(b, 1000.0)
    assert rb.start_us < ra.end_us  # no implicit ordering between streams


def test_device_sync_completes_every_stream(dev: ModuleType) -> None:
    acl = dev
    streams = [acl.rt.create_stream()[0] for _ in range(3)]
    for s in streams:
        _work(s, 300.0)
    assert acl.rt.synchronize_device() == 0
    assert all(acl.rt.stream_query(s) == (COMPLETE, 0) for s in streams)


def test_destroy_stream_rules(dev: ModuleType) -> None:
    acl = dev
    assert acl.rt.destroy_stream(0) == 100000
    s, _ = acl.rt.create_stream()
    assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_stream(s) == 107000
    assert acl.rt.synchronize_stream(s) == 107000


def test_stream_limit(bare_rt: Runtime, dev: ModuleType) -> None:
    acl = dev
    avail, ret = acl.rt.get_stream_available_num()
    assert ret == 0 and avail == 1984 - 1
    made = [acl.rt.create_stream() for _ in range(avail)]
    assert all(r == 0 for _, r in made)
    assert acl.rt.create_stream() == (0, 207008)


def test_task_ids_increase_and_default_stream_is_zero(dev: ModuleType) -> None:
    recs = [_work(0, 1.0) for _ in range(5)]
    assert [r.stream for r in recs] == [0] * 5
    assert [r.task_id for r in recs] == sorted({r.task_id for r in recs})


def test_launch_callback_needs_subscription(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    got: list[object] = []
    assert acl.rt.launch_callback(got.append, [1], 1, s) == 107015
    ready = threading.Event()
    stop = threading.Event()
    codes: list[int] = []

    def loop() -> None:
        ready.set()
        while not stop.is_set():
            codes.append(acl.rt.process_report(50))

    t = threading.Thread(target=loop)
    t.start()
    ready.wait()
    assert acl.rt.subscribe_report(t.ident, s) == 0
    assert acl.rt.subscribe_report(t.ident, s) == 100033
    assert acl.rt.launch_callback(got.append, ["data"], 1, s) == 0
    assert acl.rt.synchronize_stream(s) == 0
    stop.set()
    t.join()
    assert got == [["data"]]
    assert 507012 in codes or 0 in codes
    assert acl.rt.unsubscribe_report(t.ident, s) == 0
    with pytest.raises(TypeError, match="parameter must be callable"):
        acl.rt.launch_callback(5, [], 1, s)


def test_async_d2h_into_pinned_memory_lands_at_sync(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    d, _ = acl.rt.malloc(64, 0)
    src = np.full(64, 9, np.uint8)
    acl.rt.memcpy(d, 64, acl.util.numpy_to_ptr(src), 64, 1)
    host, _ = acl.rt.malloc_host(64)
    _work(s, 100.0)
    assert acl.rt.memcpy_async(host, 64, d, 64, 2, s) == 0
    assert acl.util.ptr_to_bytes(host, 4) == b"\0\0\0\0"  # not there yet
    assert acl.rt.synchronize_stream(s) == 0
    assert acl.util.ptr_to_bytes(host, 4) == b"\x09\x09\x09\x09"


def test_synchronize_with_timeout(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    _work(s, 5000.0)  # 5 ms of simulated work
    acl.rt.record_event(e, s)
    assert acl.rt.synchronize_event_with_timeout(e, 1) == 507047
    assert acl.rt.synchronize_stream_with_timeout(s, 1) == 507046
    assert acl.rt.synchronize_device_with_timeout(1) == 507046
    assert acl.rt.synchronize_stream_with_timeout(s, 100) == 0
    assert acl.rt.synchronize_event_with_timeout(e, 1) == 0


def test_event_of_another_device_cannot_be_recorded(dev: ModuleType) -> None:
    acl = dev
    e, _ = acl.rt.create_event()
    acl.rt.set_device(1)
    assert acl.rt.record_event(e, 0) == 107003


def test_event_limit_on_310p(bare_rt: Runtime, acl: ModuleType) -> None:
    bare_rt.configure(device="310P")
    acl.init()
    acl.rt.set_device(0)
    made = [acl.rt.create_event() for _ in range(1023)]
    assert all(ret == 0 for _, ret in made)
    assert acl.rt.create_event() == (0, 207007)
    assert acl.rt.destroy_event(made[0][0]) == 0
    assert acl.rt.create_event()[1] == 0


def test_stream_with_config_and_force_reset(dev: ModuleType) -> None:
    acl = dev
    s, ret = acl.rt.create_stream_with_config(1, 0x2)
    assert ret == 0 and acl.rt.stream_get_id(s)[1] == 0
    acl.rt.set_device(0)  # set twice: one reset would leave it open
    assert acl.rt.reset_device_force(0) == 0
    assert acl.rt.get_device() == (0, 107002)
    assert acl.rt.reset_device_force(0) == 507007


def test_polling_loops_terminate(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    _work(s, 2_000_000.0)  # two simulated seconds
    acl.rt.record_event(e, s)
    polls = 0
    while acl.rt.query_event(e) != (COMPLETE, 0):
        polls += 1
        assert polls < 200
    assert polls > 1
    assert acl.rt.stream_query(s) == (COMPLETE, 0)


def test_device_clocks_are_independent_and_start_at_zero(bare_rt: Runtime, dev: ModuleType) -> None:
    acl = dev
    first = _work(0, 1000.0)
    acl.rt.set_device(3)
    fresh = _work(0, 10.0)
    assert first.device == 0 and fresh.device == 3
    assert fresh.start_us < first.end_us  # device 3's clock started at 0 when it was set
    assert fresh.task_id == 1


def test_memset_async_is_work_on_its_stream(dev: ModuleType) -> None:
    acl = dev
    s, _ = acl.rt.create_stream()
    d, _ = acl.rt.malloc(1 << 20, 0)
    records: list[WorkRecord] = []
    hooks.add_work_listener(records.append)
    try:
        assert acl.rt.memset_async(d, 1 << 20, 0, 1 << 20, s) == 0
    finally:
        hooks.remove_work_listener(records.append)
    (rec,) = records
    assert (rec.kind, rec.op_type, rec.stream, rec.bytes_moved) == ("memset", "Memset", 1, 1 << 20)
    assert rec.site is not None and rec.site.file.endswith("test_streams_events.py")
