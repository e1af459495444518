from npu_runtime.core import launch, sched, transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes

ADD = {"duration_us": 5.0, "bound": "vector", "unit": "AI_VECTOR_CORE"}
rt = get_runtime()
rt.init()
rt.set_device(0)
dev = transfer.malloc(rt, 64, 0)


def out_of_bounds_kernel() -> None:
    # What an op kernel raises when it reads past its input: a device-side fault.
    raise AclError(codes.ACL_ERROR_RT_AICORE_EXCEPTION, "Add", "read past the 64-byte input")


launch.submit(0, name="Add_1", op_type="Add", cost=ADD)
launch.submit(0, name="Add_2", op_type="Add", cost=ADD, compute=out_of_bounds_kernel)  # @launch
launch.submit(0, name="Add_3", op_type="Add", cost=ADD)
code = 0
try:
    sched.synchronize_stream(rt, 0)  # @sync
except AclError as exc:
    code = exc.code
print("synchronize returned", code)
