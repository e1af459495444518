from npu_runtime.core import transfer
from npu_runtime.core.runtime import get_runtime
from npu_runtime.errors import AclError

rt = get_runtime()
rt.init()
rt.set_device(0)
dev = transfer.malloc(rt, 64, 0)  # @alloc
host = transfer.malloc_host(rt, 64)
transfer.free(rt, dev)  # @free
try:
    transfer.memcpy(rt, dev, 64, host, 64, 1)  # @use
except AclError as exc:
    print("memcpy returned", exc.code)
