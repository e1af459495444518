"""pyACL quickstart: device, stream, memory round trip, a MatMul on the NPU and event timing.

Runs unmodified on a real Ascend host, or on the emulator:
    ascend-lens run --device 910B examples/pyacl_quickstart.py
"""

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_HBM_MEM = 1
ACL_FLOAT16 = 1
ACL_FORMAT_ND = 2
N = 1024


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} failed with {ret}: {acl.get_recent_err_msg()}")


def upload(array, stream):
    """Device copy of `array`; the host bytes must stay alive until the stream syncs."""
    data = array.tobytes()
    ptr, ret = acl.rt.malloc(len(data), ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    check(
        acl.rt.memcpy_async(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                            ACL_MEMCPY_HOST_TO_DEVICE, stream),
        "memcpy_async H2D",
    )
    return ptr, data


def main():
    check(acl.init(), "acl.init")
    device_id = 0
    check(acl.rt.set_device(device_id), "set_device")
    context, ret = acl.rt.create_context(device_id)
    check(ret, "create_context")
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    print("SoC:", acl.get_soc_name())

    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype(np.float16)
    b = rng.standard_normal((N, N)).astype(np.float16)
    nbytes = a.nbytes

    start, ret = acl.rt.create_event()
    check(ret, "create_event")
    end, ret = acl.rt.create_event()
    check(ret, "create_event")

    check(acl.rt.record_event(start, stream), "record_event")
    a_dev, a_bytes = upload(a, stream)
    b_dev, b_bytes = upload(b, stream)
    c_dev, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    free, total, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
    check(ret, "get_mem_info")
    print(f"HBM free {free / 2**30:.2f} GiB of {total / 2**30:.2f} GiB")

    desc = acl.create_tensor_desc(ACL_FLOAT16, [N, N], ACL_FORMAT_ND)
    bufs = [acl.create_data_buffer(p, nbytes) for p in (a_dev, b_dev, c_dev)]
    attr = acl.op.create_attr()
    check(acl.op.execute_v2("MatMul", [desc, desc], bufs[:2], [desc], bufs[2:], attr, stream),
          "execute_v2 MatMul")
    check(acl.rt.record_event(end, stream), "record_event")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    ms, ret = acl.rt.event_elapsed_time(start, end)
    check(ret, "event_elapsed_time")
    print(f"2 uploads of {nbytes >> 20} MiB + a {N}x{N} fp16 MatMul: {ms:.3f} ms (simulated)")

    result = bytes(nbytes)
    check(
        acl.rt.memcpy(acl.util.bytes_to_ptr(result), nbytes, c_dev, nbytes, ACL_MEMCPY_DEVICE_TO_HOST),
        "memcpy D2H",
    )
    c = np.frombuffer(result, dtype=np.float16).reshape(N, N)
    expected = a.astype(np.float32) @ b.astype(np.float32)
    print("MatMul matches numpy:", bool(np.allclose(c, expected, rtol=1e-2, atol=1e-1)))

    acl.op.destroy_attr(attr)
    for buf in bufs:
        check(acl.destroy_data_buffer(buf), "destroy_data_buffer")
    acl.destroy_tensor_desc(desc)
    for ptr in (a_dev, b_dev, c_dev):
        check(acl.rt.free(ptr), "free")
    check(acl.rt.destroy_event(start), "destroy_event")
    check(acl.rt.destroy_event(end), "destroy_event")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.destroy_context(context), "destroy_context")
    check(acl.rt.reset_device(device_id), "reset_device")
    check(acl.finalize(), "finalize")


if __name__ == "__main__":
    main()
