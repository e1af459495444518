"""The acl module's shape: positional arguments, CPython parse errors, return tuples, layout."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore:acl.util.numpy_to_ptr will be deprecated")


def test_layout_and_identity(acl: ModuleType) -> None:
    import npu_runtime.acl as real

    assert acl is real
    for sub in ("rt", "util", "mdl", "media"):
        assert getattr(acl, sub).__name__ == f"npu_runtime.acl.{sub}"


@pytest.mark.parametrize(
    ("call", "exc", "message"),
    [
        (lambda acl: acl.rt.malloc(16), TypeError, "function takes exactly 2 arguments (1 given)"),
        (lambda acl: acl.rt.malloc(), TypeError, "function takes exactly 2 arguments (0 given)"),
        (lambda acl: acl.rt.set_device(), TypeError, "function takes exactly 1 argument (0 given)"),
        (lambda acl: acl.rt.malloc(16.0, 0), TypeError, "argument 1 must be int, not float"),
        (
            lambda acl: acl.rt.malloc(16, "0"),
            TypeError,
            "'str' object cannot be interpreted as an integer",
        ),
        (lambda acl: acl.rt.free(None), TypeError, "argument 1 must be int, not NoneType"),
        (
            lambda acl: acl.rt.set_device(2**40),
            OverflowError,
            "signed integer is greater than maximum",
        ),
        (lambda acl: acl.init("a", "b"), TypeError, "function takes at most 1 argument (2 given)"),
        (lambda acl: acl.util.numpy_to_ptr([1, 2]), ValueError, "needs an ndarray as argument"),
        (lambda acl: acl.util.bytes_to_ptr("text"), ValueError, "needs an byte as argument"),
        (lambda acl: acl.util.start_thread(1, []), TypeError, "parameter must be callable"),
        (lambda acl: acl.create_tensor_desc(0, (2, 3), 2), TypeError, "argument 2 is not list"),
    ],
)
def test_parse_errors(acl: ModuleType, call, exc: type[Exception], message: str) -> None:
    with pytest.raises(exc) as info:
        call(acl)
    assert str(info.value) == message


def test_keywords_are_rejected(acl: ModuleType) -> None:
    with pytest.raises(TypeError):
        acl.rt.malloc(size=16, policy=0)


def test_return_shapes_even_on_failure(acl: ModuleType) -> None:
    # out-values first, ret last; out-values are their initial value on failure (api.md §0)
    assert acl.rt.malloc(16, 0) == (0, 107002)
    assert acl.rt.get_mem_info(1) == (0, 0, 107002)
    assert acl.rt.create_event() == (0, 107002)
    assert acl.rt.event_elapsed_time(1, 2) == (0.0, 107000)
    assert isinstance(acl.rt.free(1), int)


def test_negative_k_wraps_like_c(acl: ModuleType) -> None:
    acl.init()
    acl.rt.set_device(0)
    # 'k' converts without overflow checks: -1 becomes 2**64-1, an invalid pointer, not a crash
    assert acl.rt.free(-1) == 107000


def test_util_pointers(acl: ModuleType) -> None:
    arr = np.arange(6, dtype=np.int32)
    ptr = acl.util.numpy_to_ptr(arr)
    assert ptr == arr.ctypes.data
    view = acl.util.ptr_to_numpy(ptr, (2, 3), 5)
    view[0, 0] = 42
    assert arr[0] == 42  # a view, no copy
    p2, contiguous = acl.util.numpy_contiguous_to_ptr(arr[::2])
    assert contiguous.flags.c_contiguous and acl.util.ptr_to_bytes(p2, 4) == np.int32(42).tobytes()
    with pytest.raises(ValueError, match="not inside a live host buffer"):
        acl.util.ptr_to_bytes(ptr + 4096, 8)


def test_data_buffers_and_tensor_descs(acl: ModuleType) -> None:
    buf = acl.create_data_buffer(0x1000, 64)
    assert (acl.get_data_buffer_addr(buf), acl.get_data_buffer_size(buf)) == (0x1000, 64)
    assert acl.update_data_buffer(buf, 0x2000, 32) == 0
    assert acl.get_data_buffer_size_v2(buf) == 32
    assert acl.destroy_data_buffer(buf) == 0
    assert acl.destroy_data_buffer(buf) == 100000
    desc = acl.create_tensor_desc(1, [2, 3, 4], 2)
    assert acl.get_tensor_desc_size(desc) == 48
    assert acl.get_tensor_desc_num_dims(desc) == 3
    assert acl.get_tensor_desc_dim_v2(desc, 1) == (3, 0)
    assert acl.get_tensor_desc_dim_v2(desc, 5) == (-1, 100000)
    assert acl.data_type_size(27) == 2
    assert acl.float16_to_float(0x3C00) == 1.0
    assert acl.float_to_float16(-2.0) == 0xC000


def test_dataset(acl: ModuleType) -> None:
    ds = acl.mdl.create_dataset()
    buf = acl.create_data_buffer(0, 0)
    assert acl.mdl.add_dataset_buffer(ds, buf) == (ds, 0)
    assert acl.mdl.get_dataset_num_buffers(ds) == 1
    assert acl.mdl.get_dataset_buffer(ds, 0) == buf
    assert acl.mdl.destroy_dataset(ds) == 0


def test_error_listener_sees_every_failing_call(acl: ModuleType) -> None:
    from npu_runtime.core import hooks

    seen = []
    hooks.add_error_listener(seen.append)
    try:
        acl.rt.malloc(16, 0)
        acl.init()
        acl.init()
        acl.rt.set_device(99)
    finally:
        hooks.remove_error_listener(seen.append)
    assert [(e.code, e.api) for e in seen] == [
        (107002, "aclrtMalloc"),
        (100002, "aclInit"),
        (107001, "aclrtSetDevice"),
    ]


def test_utilization_sys_params_and_host_register(acl: ModuleType) -> None:
    acl.init()
    acl.rt.set_device(0)
    acl.rt.malloc(32 << 30, 0)
    rates, ret = acl.rt.get_device_utilization_rate(0)
    assert ret == 0 and rates["memory_utilization"] == 51  # 32 GiB of 63
    assert acl.rt.get_device_utilization_rate(8) == ({}, 107001)
    assert acl.rt.get_sys_param_opt(0) == (0, 107021)
    assert acl.rt.set_sys_param_opt(0, 1) == 0
    assert acl.rt.get_sys_param_opt(0) == (1, 0)
    assert acl.rt.host_register(0x1000, 64, 0) == (0, 207000)


def test_tensor_desc_ranges_and_format_copy(acl: ModuleType) -> None:
    desc = acl.create_tensor_desc(0, [4, -1], 2)
    assert acl.get_tensor_desc_dim_range(desc, 0, 2) == ([4, 4], 0)
    assert acl.set_tensor_shape_range(desc, [[4, 4], [1, 128]]) == 0
    assert acl.get_tensor_desc_dim_range(desc, 1, 2) == ([1, 128], 0)
    assert acl.get_tensor_desc_dim_range(desc, 1, 5000) == (None, 100000)
    assert acl.get_tensor_desc_dim_range(desc, 7, 2) == (None, 100000)
    nz, ret = acl.trans_tensor_desc_format(desc, 29)
    assert (
        ret == 0 and acl.get_tensor_desc_format(nz) == 29 and acl.get_tensor_desc_format(desc) == 2
    )
    assert acl.set_tensor_value_range(desc, [[0, 1], [0, 1]]) == 0
