from npu_runtime.core import transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError

ACL_MEMCPY_HOST_TO_DEVICE = 1
rt = get_runtime()
rt.init()
rt.set_device(0)
dev = transfer.malloc(rt, 64, 0)
host = transfer.malloc_host(rt, 128)
code = 0
try:
    transfer.memcpy(rt, dev, 64, host, 128, ACL_MEMCPY_HOST_TO_DEVICE)  # @oob
except AclError as exc:
    code = exc.code
print("memcpy returned", code)
