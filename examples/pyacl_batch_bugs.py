"""A pyACL batch loop with two bugs that a real NPU reports late, or not at all.

    ascend-lens run examples/pyacl_batch_bugs.py

1. The result of an asynchronous copy is read before the stream is synchronised: on the
   hardware this reads stale bytes without a word; the emulator's sanitizer names the line.
2. The last batch is larger than the device buffer sized for the first: aclrtMemcpy fails
   with 107000 (ACL_ERROR_RT_PARAM_INVALID), and acl.get_recent_err_msg() says where.
"""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def check(ret, what):
    if ret != 0:
        print(f"{what} failed with {ret}\n{acl.get_recent_err_msg()}", file=sys.stderr)
        sys.exit(1)


check(acl.init(), "acl.init")
check(acl.rt.set_device(0), "acl.rt.set_device")
stream, ret = acl.rt.create_stream()
check(ret, "acl.rt.create_stream")

batches = [np.full((256, 64), i, dtype=np.float32) for i in range(3)]
batches.append(np.ones((300, 64), dtype=np.float32))  # a ragged last batch
capacity = batches[0].nbytes  # sized for the first batch only
dev, ret = acl.rt.malloc(capacity, ACL_MEM_MALLOC_HUGE_FIRST)
check(ret, "acl.rt.malloc")
result, ret = acl.rt.malloc_host(capacity)
check(ret, "acl.rt.malloc_host")

for i, batch in enumerate(batches):
    data = batch.tobytes()
    check(acl.rt.memcpy(dev, capacity, acl.util.bytes_to_ptr(data), len(data),
                        ACL_MEMCPY_HOST_TO_DEVICE), f"upload of batch {i}")
    check(acl.rt.memcpy_async(result, capacity, dev, capacity, ACL_MEMCPY_DEVICE_TO_HOST,
                              stream), f"download of batch {i}")
    first = np.frombuffer(acl.util.ptr_to_bytes(result, 4), dtype=np.float32)[0]  # before sync
    check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    print(f"batch {i}: first value {first}")

acl.rt.free_host(result)
acl.rt.free(dev)
acl.rt.destroy_stream(stream)
acl.rt.reset_device(0)
acl.finalize()
