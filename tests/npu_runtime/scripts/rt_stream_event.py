"""pyACL-style script: streams, events, async copies and timing across two streams."""

import sys

import acl

failures = []


def expect(got, want, what):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


expect(acl.init(), 0, "init")
expect(acl.rt.set_device(1), 0, "set_device")
ctx, ret = acl.rt.create_context(1)
expect(ret, 0, "create_context")
s1, ret = acl.rt.create_stream()
expect(ret, 0, "create_stream s1")
s2, ret = acl.rt.create_stream()
expect(ret, 0, "create_stream s2")
start, _ = acl.rt.create_event()
mid, _ = acl.rt.create_event()
end, _ = acl.rt.create_event()

n = 16 << 20
host, ret = acl.rt.malloc_host(n)
expect(ret, 0, "malloc_host")
arr = acl.util.ptr_to_numpy(host, (n // 4,), 11)
arr[:] = 3.5
dev, _ = acl.rt.malloc(n, 0)
back, _ = acl.rt.malloc_host(n)

expect(acl.rt.record_event(start, s1), 0, "record start")
expect(acl.rt.memcpy_async(dev, n, host, n, 1, s1), 0, "h2d async")
expect(acl.rt.record_event(mid, s1), 0, "record mid")
expect(acl.rt.stream_wait_event(s2, mid), 0, "s2 waits for mid")
expect(acl.rt.memcpy_async(back, n, dev, n, 2, s2), 0, "d2h async")
expect(acl.rt.record_event(end, s2), 0, "record end")
expect(acl.rt.query_event(end), (1, 0), "end not ready before sync")
expect(acl.rt.synchronize_event(end), 0, "sync end")
expect(acl.rt.query_event(end), (0, 0), "end complete")
ms, ret = acl.rt.event_elapsed_time(start, mid)
expect(ret, 0, "elapsed")
expect(0.5 < ms < 5.0, True, f"16 MiB over PCIe takes ~0.7 ms, got {ms}")
expect(bool((acl.util.ptr_to_numpy(back, (n // 4,), 11) == 3.5).all()), True, "round trip")

for e in (start, mid, end):
    expect(acl.rt.destroy_event(e), 0, "destroy_event")
expect(acl.rt.free(dev), 0, "free")
expect(acl.rt.free_host(host), 0, "free_host")
expect(acl.rt.free_host(back), 0, "free_host")
for s in (s1, s2):
    expect(acl.rt.destroy_stream(s), 0, "destroy_stream")
expect(acl.rt.destroy_context(ctx), 0, "destroy_context")
expect(acl.rt.reset_device(1), 0, "reset_device")
expect(acl.finalize(), 0, "finalize")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(3)
print("streams ok")
