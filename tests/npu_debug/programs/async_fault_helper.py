from npu_runtime.core import launch, sched
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError, codes

ADD = {"duration_us": 5.0, "bound": "vector", "unit": "AI_VECTOR_CORE"}
rt = get_runtime()
rt.init()
rt.set_device(0)


def faulty_kernel() -> None:
    raise AclError(codes.ACL_ERROR_RT_AICORE_EXCEPTION, "Add", "read past its input")


def enqueue_step() -> None:
    launch.submit(0, name="Add_1", op_type="Add", cost=ADD, compute=faulty_kernel)  # @launch


enqueue_step()
try:
    sched.synchronize_stream(rt, 0)  # @sync
except AclError as exc:
    print("synchronize returned", exc.code)
