"""pyACL single-op sample: Add two fp16 tensors with acl.op.execute_v2 on a stream.

    ascend-lens run examples/pyacl_add_op.py
"""

import sys

import acl
import numpy as np

ACL_FLOAT16 = 1
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2


def check(ret, what):
    if ret != 0:
        print(f"{what} failed: {ret}\n{acl.get_recent_err_msg()}", file=sys.stderr)
        sys.exit(1)


check(acl.init(), "init")
check(acl.rt.set_device(0), "set_device")
stream, ret = acl.rt.create_stream()
check(ret, "create_stream")

shape = [8, 16]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float16)
y = np.full(shape, 0.5, dtype=np.float16)
size = x.nbytes

descs, bufs, ptrs = [], [], []
for host in (x, y, None):
    desc = acl.create_tensor_desc(ACL_FLOAT16, shape, ACL_FORMAT_ND)
    ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
    check(ret, "malloc")
    if host is not None:
        data = host.tobytes()
        check(acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), size, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
    descs.append(desc)
    ptrs.append(ptr)
    bufs.append(acl.create_data_buffer(ptr, size))

attr = acl.op.create_attr()
check(acl.op.execute_v2("Add", descs[:2], bufs[:2], descs[2:], bufs[2:], attr, stream), "execute_v2 Add")
check(acl.rt.synchronize_stream(stream), "synchronize_stream")

out = bytes(size)
check(acl.rt.memcpy(acl.util.bytes_to_ptr(out), size, ptrs[2], size, ACL_MEMCPY_DEVICE_TO_HOST), "memcpy back")
result = np.frombuffer(out, dtype=np.float16).reshape(shape)
print("Add matches numpy:", bool(np.allclose(result, x + y)))

acl.op.destroy_attr(attr)
for desc, buf, ptr in zip(descs, bufs, ptrs, strict=True):
    acl.destroy_data_buffer(buf)
    acl.destroy_tensor_desc(desc)
    check(acl.rt.free(ptr), "free")
check(acl.rt.destroy_stream(stream), "destroy_stream")
check(acl.rt.reset_device(0), "reset_device")
check(acl.finalize(), "finalize")
