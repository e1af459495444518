"""`acl.rt`: devices, contexts, streams, events, memory and callbacks, as pyACL returns them.

Positional arguments only; out-values first and `ret` last (api.md §0, §2). Every function
is a thin translation of the core (npu_runtime.core), which raises AclError; here the
error becomes its code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npu_runtime.acl._args import parse
from npu_runtime.core import sched, transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes

_rt = get_runtime()
ACL_HOST = 1


def _ret(fn: Callable[..., Any], *args: Any) -> int:
    try:
        fn(*args)
    except AclError as e:
        return e.code
    return 0


def _val(default: Any, fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    try:
        return fn(*args), 0
    except AclError as e:
        return default, e.code


# -- device -----------------------------------------------------------------------------
def set_device(*args: Any) -> int:
    (dev,) = parse("i", args)
    return _ret(_rt.set_device, dev)


def reset_device(*args: Any) -> int:
    (dev,) = parse("i", args)
    return _ret(_rt.reset_device, dev)


def reset_device_force(*args: Any) -> int:
    (dev,) = parse("i", args)

    def force(d: int) -> None:
        device = _rt.devices.get(d)
        if device is None:
            _rt.reset_device(d)  # reports 507007
            return
        device.set_count = 1
        _rt.reset_device(d)

    return _ret(force, dev)


def get_device(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, _rt.get_device)


def get_device_count(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, _rt.get_device_count)


def get_run_mode(*args: Any) -> tuple[int, int]:
    parse("", args)
    return ACL_HOST, 0


def synchronize_device(*args: Any) -> int:
    parse("", args)
    return _ret(_rt.synchronize_device)


def synchronize_device_with_timeout(*args: Any) -> int:
    (timeout,) = parse("i", args)
    return _ret(_rt.synchronize_device, timeout)


def set_device_sat_mode(*args: Any) -> int:
    (mode,) = parse("i", args)

    def setm(m: int) -> None:
        dev = _rt.current_device("aclrtSetDeviceSatMode")
        if m not in (0, 1):
            raise _rt.fail(
                codes.ACL_ERROR_INVALID_PARAM, "aclrtSetDeviceSatMode", f"mode {m} is not 0 or 1"
            )
        dev.sat_mode = m

    return _ret(setm, mode)


def get_device_sat_mode(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, lambda: _rt.current_device("aclrtGetDeviceSatMode").sat_mode)


# aclrtDevAttr (api.md §2) -> DeviceProfile field
_DEVICE_INFO = {
    1: "ai_cpu",
    101: "ai_core",
    102: "cube_core",
    201: "vector_core",
    301: "hbm_bytes",
    302: "l2_bytes",
}


def get_device_info(*args: Any) -> tuple[int, int]:
    dev, attr = parse("ii", args)

    def info() -> int:
        api = "aclrtGetDeviceInfo"
        if not 0 <= dev < _rt.device_count:
            raise _rt.fail(
                codes.ACL_ERROR_RT_INVALID_DEVICEID, api, f"device {dev} is out of range"
            )
        field = _DEVICE_INFO.get(attr)
        if field is None:
            raise _rt.fail(codes.ACL_ERROR_INVALID_PARAM, api, f"attr {attr} is not supported")
        return int(getattr(_rt.profile, field))

    return _val(0, info)


def query_device_status(*args: Any) -> tuple[int, int]:
    (dev,) = parse("i", args)

    def status() -> int:
        if not 0 <= dev < _rt.device_count:
            raise _rt.fail(
                codes.ACL_ERROR_RT_INVALID_DEVICEID,
                "aclrtQueryDeviceStatus",
                f"device {dev} is out of range",
            )
        return 0

    return _val(0, status)


def device_can_access_peer(*args: Any) -> tuple[int, int]:
    dev, peer = parse("ii", args)

    def can() -> int:
        for d in (dev, peer):
            if not 0 <= d < _rt.device_count:
                raise _rt.fail(
                    codes.ACL_ERROR_RT_INVALID_DEVICEID,
                    "aclrtDeviceCanAccessPeer",
                    f"device {d} is out of range",
                )
        return int(dev != peer)

    return _val(0, can)


def device_enable_peer_access(*args: Any) -> int:
    parse("ii", args)
    return 0


def device_disable_peer_access(*args: Any) -> int:
    parse("i", args)
    return 0


def get_last_error(*args: Any) -> int:
    parse("i", args)
    code = _rt.tls.last_error
    _rt.tls.last_error = 0
    return code


def peek_at_last_error(*args: Any) -> int:
    parse("i", args)
    return _rt.tls.last_error


# -- context ----------------------------------------------------------------------------
def create_context(*args: Any) -> tuple[int, int]:
    (dev,) = parse("i", args)
    return _val(0, _rt.create_context, dev)


def destroy_context(*args: Any) -> int:
    (ctx,) = parse("k", args)
    return _ret(_rt.destroy_context, ctx)


def set_context(*args: Any) -> int:
    (ctx,) = parse("k", args)
    return _ret(_rt.set_context, ctx)


def get_context(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, _rt.get_context)


def ctx_get_current_default_stream(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, sched.default_stream, _rt)


# -- stream -----------------------------------------------------------------------------
def create_stream(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, sched.create_stream, _rt)


def create_stream_with_config(*args: Any) -> tuple[int, int]:
    priority, flag = parse("kk", args)
    return _val(0, sched.create_stream, _rt, priority, flag)


def destroy_stream(*args: Any) -> int:
    (s,) = parse("k", args)
    return _ret(sched.destroy_stream, _rt, s)


def destroy_stream_force(*args: Any) -> int:
    return destroy_stream(*args)


def synchronize_stream(*args: Any) -> int:
    (s,) = parse("k", args)
    return _ret(sched.synchronize_stream, _rt, s)


def synchronize_stream_with_timeout(*args: Any) -> int:
    s, timeout = parse("ki", args)
    return _ret(sched.synchronize_stream, _rt, s, "aclrtSynchronizeStreamWithTimeout", timeout)


def stream_query(*args: Any) -> tuple[int, int]:
    (s,) = parse("k", args)
    return _val(0, sched.stream_query, _rt, s)


def stream_get_id(*args: Any) -> tuple[int, int]:
    (s,) = parse("k", args)
    return _val(0, sched.stream_id, _rt, s)


def get_stream_available_num(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, sched.available_streams, _rt)


def set_stream_failure_mode(*args: Any) -> int:
    s, _mode = parse("kk", args)
    return _ret(_rt.resolve_stream, s, "aclrtSetStreamFailureMode")


# -- memory -----------------------------------------------------------------------------
def malloc(*args: Any) -> tuple[int, int]:
    size, policy = parse("ki", args)
    try:
        return transfer.malloc(_rt, size, policy), 0
    except AclError as e:
        return 0, e.code


def malloc_align32(*args: Any) -> tuple[int, int]:
    size, policy = parse("ki", args)
    return _val(0, transfer.malloc, _rt, size, policy, "aclrtMallocAlign32", True)


def malloc_cached(*args: Any) -> tuple[int, int]:
    size, policy = parse("ki", args)
    return _val(0, transfer.malloc, _rt, size, policy, "aclrtMallocCached")


def malloc_with_cfg(*args: Any) -> tuple[int, int]:
    size, policy, _cfg = parse("kiO", args)
    return _val(0, transfer.malloc, _rt, size, policy, "aclrtMallocWithCfg")


def free(*args: Any) -> int:
    (ptr,) = parse("k", args)
    try:
        transfer.free(_rt, ptr)
    except AclError as e:
        return e.code
    return 0


def malloc_host(*args: Any) -> tuple[int, int]:
    (size,) = parse("k", args)
    return _val(0, transfer.malloc_host, _rt, size)


def free_host(*args: Any) -> int:
    (ptr,) = parse("k", args)
    return _ret(transfer.free_host, _rt, ptr)


def memcpy(*args: Any) -> int:
    dst, dest_max, src, count, kind = parse("kkkki", args)
    try:
        transfer.memcpy(_rt, dst, dest_max, src, count, kind)
    except AclError as e:
        return e.code
    return 0


def memcpy_async(*args: Any) -> int:
    dst, dest_max, src, count, kind, stream = parse("kkkkik", args)
    return _ret(transfer.memcpy_async, _rt, dst, dest_max, src, count, kind, stream)


def memset(*args: Any) -> int:
    ptr, max_count, value, count = parse("kkik", args)
    return _ret(transfer.memset, _rt, ptr, max_count, value, count)


def memset_async(*args: Any) -> int:
    ptr, max_count, value, count, stream = parse("kkikk", args)
    return _ret(transfer.memset, _rt, ptr, max_count, value, count, stream)


def memcpy2d(*args: Any) -> int:
    dst, dpitch, src, spitch, width, height, kind = parse("kkkkkki", args)
    return _ret(transfer.memcpy2d, _rt, dst, dpitch, src, spitch, width, height, kind)


def memcpy2d_async(*args: Any) -> int:
    dst, dpitch, src, spitch, width, height, kind, stream = parse("kkkkkkik", args)
    return _ret(transfer.memcpy2d, _rt, dst, dpitch, src, spitch, width, height, kind, stream)


def get_mem_info(*args: Any) -> tuple[int, int, int]:
    (attr,) = parse("i", args)
    try:
        free_b, total = transfer.get_mem_info(_rt, attr)
    except AclError as e:
        return 0, 0, e.code
    return free_b, total, 0


def mem_flush(*args: Any) -> int:
    parse("kk", args)
    return 0


def mem_invalidate(*args: Any) -> int:
    parse("kk", args)
    return 0


def pointer_get_attributes(*args: Any) -> tuple[dict[str, Any], int]:
    (ptr,) = parse("k", args)
    return _val({}, transfer.pointer_attributes, _rt, ptr)


# -- events -----------------------------------------------------------------------------
def create_event(*args: Any) -> tuple[int, int]:
    parse("", args)
    return _val(0, sched.create_event, _rt)


def create_event_with_flag(*args: Any) -> tuple[int, int]:
    (flag,) = parse("k", args)
    return _val(0, sched.create_event, _rt, flag)


def create_event_ex_with_flag(*args: Any) -> tuple[int, int]:
    (flag,) = parse("k", args)
    return _val(0, sched.create_event, _rt, flag, True)


def destroy_event(*args: Any) -> int:
    (e,) = parse("k", args)
    return _ret(sched.destroy_event, _rt, e)


def record_event(*args: Any) -> int:
    e, s = parse("kk", args)
    return _ret(sched.record_event, _rt, e, s)


def reset_event(*args: Any) -> int:
    e, s = parse("kk", args)
    return _ret(sched.reset_event, _rt, e, s)


def query_event(*args: Any) -> tuple[int, int]:
    (e,) = parse("k", args)
    return _val(0, sched.query_event, _rt, e)


def query_event_status(*args: Any) -> tuple[int, int]:
    (e,) = parse("k", args)
    return _val(0, sched.query_event, _rt, e, True)


def query_event_wait_status(*args: Any) -> tuple[int, int]:
    (e,) = parse("k", args)
    return _val(0, sched.query_event, _rt, e)


def synchronize_event(*args: Any) -> int:
    (e,) = parse("k", args)
    return _ret(sched.synchronize_event, _rt, e)


def synchronize_event_with_timeout(*args: Any) -> int:
    e, timeout = parse("ki", args)
    return _ret(sched.synchronize_event, _rt, e, timeout)


def event_elapsed_time(*args: Any) -> tuple[float, int]:
    start, end = parse("kk", args)
    return _val(0.0, sched.elapsed_time, _rt, start, end)


def event_get_timestamp(*args: Any) -> tuple[int, int]:
    (e,) = parse("k", args)
    return _val(0, sched.event_timestamp, _rt, e)


def stream_wait_event(*args: Any) -> int:
    s, e = parse("kk", args)
    return _ret(sched.stream_wait_event, _rt, s, e)


# -- callbacks --------------------------------------------------------------------------
def subscribe_report(*args: Any) -> int:
    tid, s = parse("Kk", args)
    return _ret(sched.subscribe_report, _rt, tid, s)


def unsubscribe_report(*args: Any) -> int:
    tid, s = parse("Kk", args)
    return _ret(sched.unsubscribe_report, _rt, tid, s)


def launch_callback(*args: Any) -> int:
    fn, data, block, s = parse("OOik", args)
    if not callable(fn):
        raise TypeError("parameter must be callable")
    return _ret(sched.launch_callback, _rt, fn, data, block, s)


def process_report(*args: Any) -> int:
    (timeout,) = parse("i", args)
    return _ret(sched.process_report, _rt, timeout)


def set_exception_info_callback(*args: Any) -> int:
    (fn,) = parse("O", args)
    if fn is not None and not callable(fn):
        raise TypeError("parameter must be callable")
    return 0


def set_op_wait_timeout(*args: Any) -> int:
    parse("k", args)
    return 0


def set_op_execute_timeout(*args: Any) -> int:
    parse("k", args)
    return 0


def get_device_utilization_rate(*args: Any) -> tuple[dict[str, int], int]:
    (dev,) = parse("i", args)

    def rates() -> dict[str, int]:
        api = "aclrtGetDeviceUtilizationRate"
        if not 0 <= dev < _rt.device_count:
            raise _rt.fail(
                codes.ACL_ERROR_RT_INVALID_DEVICEID, api, f"device {dev} is out of range"
            )
        device = _rt.devices.get(dev)
        mem = device.memory if device is not None else None
        memory = round(100 * mem.used / mem.capacity) if mem is not None else 0
        # Compute units are idle between calls from the host's point of view.
        return {
            "cube_utilization": 0,
            "vector_utilization": 0,
            "aicpu_utilization": 0,
            "memory_utilization": memory,
            "utilization_extend": 0,
        }

    return _val({}, rates)


def set_sys_param_opt(*args: Any) -> int:
    opt, value = parse("ik", args)
    _rt.sys_params[opt] = value
    return 0


def get_sys_param_opt(*args: Any) -> tuple[int, int]:
    (opt,) = parse("i", args)
    if opt not in _rt.sys_params:
        err = _rt.fail(
            codes.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET,
            "aclrtGetSysParamOpt",
            f"option {opt} was never set",
        )
        return 0, err.code
    return _rt.sys_params[opt], 0


def host_register(*args: Any) -> tuple[int, int]:
    ptr, _size, _type = parse("kki", args)
    err = _rt.fail(
        codes.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        "aclrtHostRegister",
        f"registering host memory 0x{ptr:x} for device access is not emulated; copy it with acl.rt.memcpy",
    )
    return 0, err.code
