"""`acl.media`: only the DVPP buffer calls samples use (api.md §6); they are device memory."""

from __future__ import annotations

from typing import Any

from npu_runtime.acl._args import parse
from npu_runtime.core import transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError

_rt = get_runtime()


def dvpp_malloc(*args: Any) -> tuple[int, int]:
    (size,) = parse("k", args)
    try:
        return transfer.malloc(_rt, size, 0, "acldvppMalloc"), 0
    except AclError as e:
        return 0, e.code


def dvpp_free(*args: Any) -> int:
    (ptr,) = parse("k", args)
    try:
        transfer.free(_rt, ptr, "acldvppFree")
    except AclError as e:
        return e.code
    return 0
