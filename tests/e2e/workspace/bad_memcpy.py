"""A pyACL script whose second copy asks for more bytes than the device buffer holds."""

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1

acl.init()
acl.rt.set_device(0)
host = np.ones(256, dtype=np.float32)
dev, ret = acl.rt.malloc(host.nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
host_bytes = host.tobytes()
ptr = acl.util.bytes_to_ptr(host_bytes)
ret = acl.rt.memcpy(dev, host.nbytes, ptr, host.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
ret = acl.rt.memcpy(dev, host.nbytes, ptr, host.nbytes * 2, ACL_MEMCPY_HOST_TO_DEVICE)
print("memcpy returned", ret)
acl.rt.free(dev)
acl.rt.reset_device(0)
acl.finalize()
