"""Several host threads sharing one device, each with its own context binding."""

import threading

import acl
import numpy as np

acl.init()
acl.rt.set_device(0)
ctx, _ = acl.rt.get_context()
errors = []


def worker(seed):
    if acl.rt.set_context(ctx) != 0:
        errors.append("set_context")
        return
    stream, ret = acl.rt.create_stream()
    data = np.full(1 << 16, seed, dtype=np.int32)
    n = data.nbytes
    for _ in range(50):
        ptr, ret = acl.rt.malloc(n, 0)
        if ret:
            errors.append(f"malloc {ret}")
            return
        acl.rt.memcpy_async(ptr, n, acl.util.numpy_to_ptr(data), n, 1, stream)
        out = np.zeros_like(data)
        acl.rt.memcpy_async(acl.util.numpy_to_ptr(out), n, ptr, n, 2, stream)
        acl.rt.synchronize_stream(stream)
        if not (out == seed).all():
            errors.append(f"thread {seed}: wrong data")
        acl.rt.free(ptr)
    acl.rt.destroy_stream(stream)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
free, total, _ = acl.rt.get_mem_info(1)
assert free == total, "every block freed"
assert not errors, errors
acl.rt.reset_device(0)
acl.finalize()
print("threads ok")
