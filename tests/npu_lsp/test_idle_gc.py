"""The worker's garbage collection between tasks (`npu_lsp.idle_gc`)."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator

import pytest

from npu_lsp.idle_gc import IdleCollector


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cyclic_garbage() -> weakref.ref[Node]:
    """A reference cycle nothing else holds: only the cyclic collector frees it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def collector() -> Iterator[IdleCollector]:
    was = gc.isenabled()
    c = IdleCollector(delay=0.05, full_every=3)
    c.start()
    try:
        yield c
    finally:
        if was:
            gc.enable()


def test_automatic_collection_is_off_and_garbage_goes_after_a_task(
    collector: IdleCollector,
) -> None:
    assert not gc.isenabled()
    collector.task_started()
    dead = cyclic_garbage()
    time.sleep(0.15)
    assert dead() is not None  # nothing collects while a task runs
    collector.task_done()
    deadline = time.monotonic() + 5
    while dead() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dead() is None


def test_a_task_starting_cancels_the_pending_collection(collector: IdleCollector) -> None:
    collector.task_started()
    collector.task_done()
    collector.task_started()  # within the delay: the next change goes first
    dead = cyclic_garbage()
    time.sleep(0.2)
    assert dead() is not None
    collector.task_done()
    deadline = time.monotonic() + 5
    while dead() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dead() is None


def test_tasks_back_to_back_still_collect(collector: IdleCollector) -> None:
    """Never idle (every task starts within the delay of the last): after a bounded number
    of tasks the collection runs as a task ends."""
    dead = cyclic_garbage()
    for _ in range(10):
        collector.task_started()
        collector.task_done()
    assert dead() is None


def test_old_garbage_goes_in_a_pause_after_enough_tasks() -> None:
    """Garbage that outlived a young pass (in the oldest generation) is found by the pass
    over the whole heap, which runs once the worker has been idle for a while."""
    was = gc.isenabled()
    c = IdleCollector(delay=0.01, full_every=2, full_delay=0.2)
    c.start()
    try:
        holder = [Node()]
        holder[0].other = holder[0]
        gc.collect(1)  # the cycle is old now
        dead = weakref.ref(holder[0])
        holder.clear()
        c.task_started()
        c.task_done()
        time.sleep(0.1)
        gc.collect(1)
        assert dead() is not None  # young passes do not reach it
        c.task_started()
        c.task_done()
        deadline = time.monotonic() + 5
        while dead() is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert dead() is None
    finally:
        if was:
            gc.enable()
