"""pyACL misuse, one case per row: each must return its code (or raise what pyACL raises),
never take the process down. Prints {case: result} as JSON on the last line."""

import json
import sys
import tempfile

import acl
import numpy as np

H2D, D2H, D2D = 1, 2, 3
N = 16 << 20
acl.init()
acl.rt.set_device(0)
dev, _ = acl.rt.malloc(N, 0)
small, _ = acl.rt.malloc(64, 0)
tmp = tempfile.mkdtemp()
np.arange(N, dtype=np.uint32).view(np.uint8)[:N].tofile(f"{tmp}/data.bin")
memmap_r = np.memmap(f"{tmp}/data.bin", np.uint8, "r", shape=(N,))
reversed_view = np.zeros(N, np.uint8)[::-1]
strided = np.zeros(2 * N, np.uint8)[::2]
broadcast = np.broadcast_to(np.zeros(1, np.uint8), (N,))
frozen = np.frombuffer(bytes(64), np.uint8)
host64 = np.arange(64, dtype=np.uint8)


def ptr(a):
    return acl.util.numpy_to_ptr(a)


def freed_twice():
    p, _ = acl.rt.malloc(64, 0)
    acl.rt.free(p)
    return acl.rt.free(p)


def memcpy2d_ok():
    out = np.zeros(64, np.uint8)
    assert acl.rt.memcpy2d(small, 32, ptr(host64), 32, 16, 2, H2D) == 0
    assert acl.rt.memcpy2d(ptr(out), 32, small, 32, 16, 2, D2H) == 0
    same = (out[:16] == host64[:16]).all() and (out[32:48] == host64[32:48]).all()
    return "rows copied" if same else "wrong bytes"


def readonly_view_of_host():
    view = acl.util.ptr_to_numpy(ptr(memmap_r), (16,), 2)
    try:
        view[0] = 1
    except ValueError:
        return "read-only"
    return "writable"


CASES = {
    "h2d from a reversed view": lambda: acl.rt.memcpy(dev, N, ptr(reversed_view), N, H2D),
    "d2h into a reversed view": lambda: acl.rt.memcpy(ptr(reversed_view), N, dev, N, D2H),
    "h2d from a broadcast view": lambda: acl.rt.memcpy(dev, N, ptr(broadcast), N, H2D),
    "d2h into a read-only memmap": lambda: acl.rt.memcpy(ptr(memmap_r), N, dev, N, D2H),
    "d2h into a read-only array": lambda: acl.rt.memcpy(ptr(frozen), 64, small, 64, D2H),
    "memset of a read-only memmap": lambda: acl.rt.memset(ptr(memmap_r), N, 0, N),
    "h2d from a read-only memmap": lambda: acl.rt.memcpy(dev, N, ptr(memmap_r), N, H2D),
    "h2d from a strided view": lambda: acl.rt.memcpy(dev, N, ptr(strided), N, H2D),
    "ptr_to_numpy over a read-only memmap": readonly_view_of_host,
    "memcpy2d width 0": lambda: acl.rt.memcpy2d(small, 32, dev, 32, 0, 2, D2H),
    "memcpy2d height 0": lambda: acl.rt.memcpy2d(small, 32, ptr(host64), 32, 32, 0, H2D),
    "memcpy2d dst == src, height -1": lambda: acl.rt.memcpy2d(small, 32, small, 32, 32, -1, 3),
    "memcpy2d height -1": lambda: acl.rt.memcpy2d(small, 32, ptr(host64), 32, 32, -1, H2D),
    "memcpy2d height 2**40": lambda: acl.rt.memcpy2d(small, 32, ptr(host64), 32, 32, 2**40, H2D),
    "memcpy2d width > pitch": lambda: acl.rt.memcpy2d(small, 8, ptr(host64), 16, 9, 4, H2D),
    "memcpy2d device to device": lambda: acl.rt.memcpy2d(small, 32, dev, 32, 32, 2, D2D),
    "memcpy2d NULL dst": lambda: acl.rt.memcpy2d(0, 32, dev, 32, 32, 2, D2H),
    "memcpy2d rows": memcpy2d_ok,
    "malloc_host(2**40)": lambda: acl.rt.malloc_host(2**40)[1],
    "malloc_host(-1)": lambda: acl.rt.malloc_host(-1)[1],
    "malloc_host(0)": lambda: acl.rt.malloc_host(0)[1],
    "memcpy count > destMax": lambda: acl.rt.memcpy(small, 64, dev, 128, D2D),
    "memcpy from an unknown host pointer": lambda: acl.rt.memcpy(small, 64, 0x1234, 64, H2D),
    "memcpy past a device allocation": lambda: acl.rt.memcpy(small, 4096, dev, 4096, D2D),
    "free twice": freed_twice,
    "free NULL": lambda: acl.rt.free(0),
    "set_device past the count": lambda: acl.rt.set_device(64),
}

results = {}
for name, case in CASES.items():
    try:
        results[name] = case()
    except Exception as exc:  # what pyACL raises is part of the contract too
        results[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(results))
sys.stdout.flush()
