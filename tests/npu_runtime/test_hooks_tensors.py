"""Tensor and sync listeners: what precision dumps and profiler steps are built on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

from npu_runtime import Tensor
from npu_runtime.core import hooks
from npu_runtime.core.faults import injector
from npu_runtime.core.runtime import Runtime, get_runtime

Seen = list[tuple[str, list[np.ndarray], list[np.ndarray], dict[str, Any]]]


@pytest.fixture
def seen() -> Iterator[Seen]:
    got: Seen = []

    def listener(op: str, ins: list[Any], outs: list[Any], attrs: Mapping[str, Any]) -> None:
        got.append((op, [np.array(a) for a in ins], [np.array(a) for a in outs], dict(attrs)))

    get_runtime().reset()
    hooks.add_tensor_listener(listener)
    yield got
    hooks.remove_tensor_listener(listener)
    injector.clear()
    get_runtime().reset()


def test_listener_sees_inputs_and_the_outputs_as_stored(seen: Seen) -> None:
    a = Tensor(np.full((2, 2), 300.0, np.float16))
    y = a * a
    ((op, ins, outs, attrs),) = seen
    assert (op, attrs) == ("Mul", {})
    np.testing.assert_array_equal(ins[0], a.numpy())
    assert outs[0].dtype == np.float16 and np.isinf(outs[0]).all()  # as the device stored it
    np.testing.assert_array_equal(outs[0], y.numpy())


def test_no_call_for_an_op_whose_kernel_never_ran(seen: Seen) -> None:
    injector.add("op:Add:1:507015")
    a = Tensor(np.ones(2, np.float32))
    _ = a + a
    _ = a * a
    assert [s[0] for s in seen] == ["Mul"]


def test_removed_listener_is_not_called(seen: Seen) -> None:
    hooks.remove_tensor_listener(hooks.tensor_listeners[-1])
    a = Tensor(np.ones(2, np.float32))
    _ = a + a
    assert seen == []


@pytest.fixture
def rt() -> Iterator[Runtime]:
    runtime = get_runtime()
    runtime.reset()
    runtime.init()
    yield runtime
    injector.clear()
    runtime.reset()


def test_sync_listener_hears_each_successful_device_sync(rt: Runtime) -> None:
    synced: list[int] = []
    hooks.add_sync_listener(synced.append)
    try:
        rt.set_device(1)
        rt.synchronize_device()
        rt.set_device(0)
        rt.synchronize_device()
        injector.add("aclrtSynchronizeDevice:1:507000")
        with pytest.raises(Exception, match="507000"):
            rt.synchronize_device()
    finally:
        hooks.remove_sync_listener(synced.append)
    assert synced == [1, 0]
