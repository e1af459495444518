"""Bugs the hardware would not report, found by the sanitizer (run it and read stderr).

    ascend-lens run examples/sanitizer_findings.py
"""

import acl
import numpy as np

ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2

acl.init()
acl.rt.set_device(0)
stream, _ = acl.rt.create_stream()
payload = np.arange(16, dtype=np.float32).tobytes()
src = acl.util.bytes_to_ptr(payload)  # valid while `payload` lives

small, _ = acl.rt.malloc(40, 0)  # 40 bytes asked; the runtime reserves 96
print("copy 64 bytes into 40:", acl.rt.memcpy(small, 64, src, 64, ACL_MEMCPY_HOST_TO_DEVICE))

pinned, _ = acl.rt.malloc_host(64)
acl.rt.memcpy_async(pinned, 64, small, 64, ACL_MEMCPY_DEVICE_TO_HOST, stream)
print("read before sync:", acl.util.ptr_to_bytes(pinned, 8))  # not synchronised yet
acl.rt.synchronize_stream(stream)

acl.rt.free(small)
print("use after free:", acl.rt.memcpy(small, 64, src, 64, ACL_MEMCPY_HOST_TO_DEVICE))
print("double free:", acl.rt.free(small))

leaked, _ = acl.rt.malloc(1 << 20, 0)  # never freed
dangling = acl.util.bytes_to_ptr(np.ones(16, np.float32).tobytes())  # the bytes die at once
print("copy from a released bytes object:", acl.rt.memcpy(leaked, 64, dangling, 64, ACL_MEMCPY_HOST_TO_DEVICE))
acl.rt.free_host(pinned)
acl.rt.destroy_stream(stream)
acl.rt.reset_device(0)
acl.finalize()
