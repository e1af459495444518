"""A 40 GB device buffer zero-filled by memset must not take 40 GB of host RAM."""

import acl
import numpy as np

acl.init()
acl.rt.set_device(0)
n = 40 << 30
d, ret = acl.rt.malloc(n, 0)
assert ret == 0, ret
assert acl.rt.memset(d, n, 7, 1 << 20) == 0  # some bytes backed with data first
assert acl.rt.memset(d, n, 0, n) == 0
out = np.ones(16, np.uint8)
assert acl.rt.memcpy(acl.util.numpy_to_ptr(out), 16, d + 12345, 16, 2) == 0
assert acl.rt.memset(d + 4097, n, 5, 3 << 20) == 0  # unaligned, non-zero: written
assert acl.rt.memset(d + 4099, n, 0, 2 << 20) == 0  # unaligned zero: edges written
tail = np.ones(8, np.uint8)
assert acl.rt.memcpy(acl.util.numpy_to_ptr(tail), 8, d + 4095, 8, 2) == 0
print("zeros", int(out.sum()), "edges", tail.tolist())
# VmHWM is this process image's peak; ru_maxrss would also count the parent's RSS at fork
# (Linux keeps the pre-exec peak), so a big test runner could fail this.
with open("/proc/self/status") as status:
    hwm_kb = next(int(ln.split()[1]) for ln in status if ln.startswith("VmHWM:"))
print("maxrss_mb", hwm_kb // 1024)
assert acl.rt.free(d) == 0
