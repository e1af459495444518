"""Two streams, an event dependency and timing on the simulated 910B clock.

A copy stream uploads the next batch while the default stream works on the current one;
`stream_wait_event` makes the compute wait only for the data it needs.

    ascend-lens run examples/pyacl_streams_events.py
"""

import acl

ACL_MEMCPY_HOST_TO_DEVICE = 1
BATCHES = 4
NBYTES = 8 << 20

acl.init()
acl.rt.set_device(0)
copy_stream, _ = acl.rt.create_stream()
compute_stream, _ = acl.rt.create_stream()
start, _ = acl.rt.create_event()
end, _ = acl.rt.create_event()

host, _ = acl.rt.malloc_host(NBYTES)  # pinned: copies are truly asynchronous
acl.util.ptr_to_numpy(host, (NBYTES // 4,), 11)[:] = 1.0
buffers = [acl.rt.malloc(NBYTES, 0)[0] for _ in range(BATCHES)]
uploaded = [acl.rt.create_event()[0] for _ in range(BATCHES)]

acl.rt.record_event(start, copy_stream)
for i, dev in enumerate(buffers):
    acl.rt.memcpy_async(dev, NBYTES, host, NBYTES, ACL_MEMCPY_HOST_TO_DEVICE, copy_stream)
    acl.rt.record_event(uploaded[i], copy_stream)
    acl.rt.stream_wait_event(compute_stream, uploaded[i])
    acl.rt.memset_async(dev, NBYTES, 0, NBYTES, compute_stream)  # stands in for a kernel
acl.rt.record_event(end, compute_stream)

status, _ = acl.rt.query_event(end)
print("right after queuing, end event is", "complete" if status == 0 else "not ready")
acl.rt.synchronize_stream(compute_stream)
ms, ret = acl.rt.event_elapsed_time(start, end)
print(f"{BATCHES} uploads of {NBYTES >> 20} MiB + compute: {ms:.3f} ms simulated (ret {ret})")

for e in (*uploaded, start, end):
    acl.rt.destroy_event(e)
for dev in buffers:
    acl.rt.free(dev)
acl.rt.free_host(host)
acl.rt.destroy_stream(copy_stream)
acl.rt.destroy_stream(compute_stream)
acl.rt.reset_device(0)
acl.finalize()
