"""Patterns the official pyACL memory samples rely on, checked under the emulator.

- memset_async on malloc_host memory, then a host-to-host memcpy into a bytes object read
  back with np.frombuffer;
- a memcpy whose kind says DEVICE_TO_HOST although both pointers are host memory (CANN 8
  copies by location: the call succeeds, the sanitizer notes the kind);
- DVPP buffers from acl.media, async copies into pinned memory that land at the sync.
"""

import sys

import acl
import numpy as np

H2H, H2D, D2H = 0, 1, 2
SIZE = 4096
failures = []


def expect(got, want, what):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def host_view(ptr, kind):
    data = np.ones(SIZE, dtype=np.byte).tobytes()
    expect(acl.rt.memcpy(acl.util.bytes_to_ptr(data), SIZE, ptr, SIZE, kind), 0, f"memcpy kind {kind}")
    return np.frombuffer(data, dtype=np.byte)


expect(acl.init(), 0, "init")
expect(acl.rt.set_device(0), 0, "set_device")
context, ret = acl.rt.create_context(0)
stream, ret = acl.rt.create_stream()

host, ret = acl.rt.malloc_host(SIZE)
expect(acl.rt.memset_async(host, SIZE, 7, SIZE, stream), 0, "memset_async on host memory")
dvpp, ret = acl.media.dvpp_malloc(SIZE)
expect(ret, 0, "dvpp_malloc")
expect(acl.rt.synchronize_stream(stream), 0, "sync")
expect(int(host_view(host, H2H).sum()), 7 * SIZE, "memset result seen through H2H")
expect(acl.rt.memcpy_async(dvpp, SIZE, host, SIZE, H2D, stream), 0, "h2d async")
expect(acl.rt.synchronize_stream(stream), 0, "sync")
expect(int(host_view(host, D2H).sum()), 7 * SIZE, "host memory read with a D2H kind")

back, ret = acl.rt.malloc_host(SIZE)
expect(acl.rt.memcpy_async(back, SIZE, dvpp, SIZE, D2H, stream), 0, "d2h async into pinned")
expect(acl.rt.synchronize_stream(stream), 0, "sync")
expect(int(host_view(back, H2H).sum()), 7 * SIZE, "d2h landed")

for ptr in (host, back):
    expect(acl.rt.free_host(ptr), 0, "free_host")
expect(acl.media.dvpp_free(dvpp), 0, "dvpp_free")
expect(acl.rt.destroy_stream(stream), 0, "destroy_stream")
expect(acl.rt.destroy_context(context), 0, "destroy_context")
expect(acl.rt.reset_device(0), 0, "reset_device")
expect(acl.finalize(), 0, "finalize")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(3)
print("sample patterns ok")
