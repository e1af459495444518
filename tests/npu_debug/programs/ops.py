import sys

from npu_runtime.core import launch, sched, transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError

ADD = {"duration_us": 2.0, "bound": "vector", "unit": "AI_VECTOR_CORE"}
MATMUL = {"duration_us": 40.0, "bound": "cube", "unit": "AI_CORE"}
rt = get_runtime()
rt.init()
rt.set_device(0)
print("devices", rt.get_device_count())
codes = []
for _ in range(2):
    try:
        transfer.malloc(rt, 1024, 0)  # @malloc
        codes.append(0)
    except AclError as exc:
        codes.append(exc.code)
for i in range(3):
    launch.submit(0, name=f"Add_{i}", op_type="Add", cost=ADD)  # @add
for i in range(2):
    launch.submit(0, name=f"MatMul_{i}", op_type="MatMul", cost=MATMUL)  # @matmul
checkpoint = len(codes)  # @checkpoint
try:
    sched.synchronize_stream(rt, 0)  # @sync
except AclError as exc:
    codes.append(exc.code)
print("codes", codes)
sys.exit(5 if codes != [0, 0] else 0)
