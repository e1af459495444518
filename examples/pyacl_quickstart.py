"""pyACL quickstart: device, stream, memory round trip and event timing.

Runs unmodified on a real Ascend host, or on the emulator:
    ascend-lens run --device 910B examples/pyacl_quickstart.py
"""

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_HBM_MEM = 1


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} failed with {ret}: {acl.get_recent_err_msg()}")


def main():
    check(acl.init(), "acl.init")
    device_id = 0
    check(acl.rt.set_device(device_id), "set_device")
    context, ret = acl.rt.create_context(device_id)
    check(ret, "create_context")
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    print("SoC:", acl.get_soc_name())

    host = np.arange(1 << 20, dtype=np.float32)
    nbytes = host.nbytes
    dev_ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    free, total, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
    check(ret, "get_mem_info")
    print(f"HBM free {free / 2**30:.2f} GiB of {total / 2**30:.2f} GiB")

    start, ret = acl.rt.create_event()
    check(ret, "create_event")
    end, ret = acl.rt.create_event()
    check(ret, "create_event")

    host_bytes = host.tobytes()
    check(acl.rt.record_event(start, stream), "record_event")
    check(
        acl.rt.memcpy_async(dev_ptr, nbytes, acl.util.bytes_to_ptr(host_bytes), nbytes,
                            ACL_MEMCPY_HOST_TO_DEVICE, stream),
        "memcpy_async H2D",
    )
    check(acl.rt.record_event(end, stream), "record_event")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    ms, ret = acl.rt.event_elapsed_time(start, end)
    check(ret, "event_elapsed_time")
    print(f"H2D copy of {nbytes >> 20} MiB: {ms:.3f} ms (simulated)")

    result = bytes(nbytes)
    check(
        acl.rt.memcpy(acl.util.bytes_to_ptr(result), nbytes, dev_ptr, nbytes, ACL_MEMCPY_DEVICE_TO_HOST),
        "memcpy D2H",
    )
    back = np.frombuffer(result, dtype=np.float32)
    print("round trip ok:", bool(np.array_equal(back, host)))

    check(acl.rt.destroy_event(start), "destroy_event")
    check(acl.rt.destroy_event(end), "destroy_event")
    check(acl.rt.free(dev_ptr), "free")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.destroy_context(context), "destroy_context")
    check(acl.rt.reset_device(device_id), "reset_device")
    check(acl.finalize(), "finalize")


if __name__ == "__main__":
    main()
