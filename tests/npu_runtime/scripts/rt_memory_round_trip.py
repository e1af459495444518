"""pyACL-style script: memory APIs with return codes checked and data round trips."""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_HBM_MEM = 1
failures = []


def expect(got, want, what):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


expect(acl.init(), 0, "init")
expect(acl.rt.set_device(0), 0, "set_device")
free0, total, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
expect(ret, 0, "get_mem_info")

data = np.linspace(-1, 1, 4096, dtype=np.float32)
size = data.nbytes
a, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
expect(ret, 0, "malloc a")
b, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
expect(ret, 0, "malloc b")
free1, _, _ = acl.rt.get_mem_info(ACL_HBM_MEM)
expect(free0 - free1, 2 * (size + 32 + 32), "accounting")  # rounded + padded, 64-aligned

src = data.tobytes()
expect(
    acl.rt.memcpy(a, size, acl.util.bytes_to_ptr(src), size, ACL_MEMCPY_HOST_TO_DEVICE), 0, "h2d"
)
expect(acl.rt.memcpy(b, size, a, size, ACL_MEMCPY_DEVICE_TO_DEVICE), 0, "d2d")
expect(acl.rt.memset(a, size, 0, size), 0, "memset")
out = bytes(size)
expect(
    acl.rt.memcpy(acl.util.bytes_to_ptr(out), size, b, size, ACL_MEMCPY_DEVICE_TO_HOST), 0, "d2h"
)
expect(np.array_equal(np.frombuffer(out, np.float32), data), True, "round trip")
zeros = bytes(size)
acl.rt.memcpy(acl.util.bytes_to_ptr(zeros), size, a, size, ACL_MEMCPY_DEVICE_TO_HOST)
expect(zeros.count(0), size, "memset zeroed")

expect(
    acl.rt.memcpy(a, size, acl.util.bytes_to_ptr(src), size + 4, ACL_MEMCPY_HOST_TO_DEVICE),
    107000,
    "count > destMax",
)
expect(acl.rt.free(a), 0, "free a")
expect(acl.rt.free(b), 0, "free b")
expect(acl.rt.get_mem_info(ACL_HBM_MEM)[0], free0, "all freed")
expect(acl.rt.reset_device(0), 0, "reset_device")
expect(acl.finalize(), 0, "finalize")

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(3)
print("memory ok")
