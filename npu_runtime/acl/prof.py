"""`acl.prof`: pyACL's profiling API (aclprofInit, CreateConfig, Start, Stop, Finalize).

Positional arguments only; functions return `ret` (int), and create_config returns the
config handle (0 on failure), as pyACL does (api.md §0). The state lives in
npu_runtime.profiler.aclprof; this module only translates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npu_runtime.acl._args import parse
from npu_runtime.errors import AclError
from npu_runtime.profiler.aclprof import state


def _ret(fn: Callable[..., Any], *args: Any) -> int:
    try:
        fn(*args)
    except AclError as e:
        return e.code
    return 0


def init(*args: Any) -> int:
    """acl.prof.init(profiler_result_path) -> ret"""
    (path,) = parse("s", args)
    return _ret(state().init, path)


def finalize(*args: Any) -> int:
    """acl.prof.finalize() -> ret"""
    parse("", args)
    return _ret(state().finalize)


def create_config(*args: Any) -> int:
    """acl.prof.create_config(device_id_list, aicore_metrics, aicore_events, data_type_config) -> config"""
    devices, metrics, _events, data_types = parse("Oikk", args)
    if not isinstance(devices, list):
        raise TypeError("argument 1 is not list")
    if not all(isinstance(d, int) for d in devices):
        raise TypeError("device id list must hold ints")
    try:
        return state().create_config(devices, metrics, data_types)
    except AclError:
        return 0


def destroy_config(*args: Any) -> int:
    """acl.prof.destroy_config(config) -> ret"""
    (handle,) = parse("k", args)
    return _ret(state().destroy_config, handle)


def start(*args: Any) -> int:
    """acl.prof.start(config) -> ret"""
    (handle,) = parse("k", args)
    return _ret(state().start, handle)


def stop(*args: Any) -> int:
    """acl.prof.stop(config) -> ret"""
    (handle,) = parse("k", args)
    return _ret(state().stop, handle)
