"""torch.npu memory figures and the caching allocator, one labelled line per check."""

import torch
import torch_npu  # noqa: F401 (registers the npu device)

from npu_runtime.core.runtime import get_runtime

a = torch.empty(1000, dtype=torch.float32, device="npu")  # 4000 B -> one 4096 B block
print("allocated", torch.npu.memory_allocated(), torch.npu.memory_reserved())
used = get_runtime().device_stats()[0]["used_bytes"]
print("runtime_sees", used >= 4096)
del a
print("after_del", torch.npu.memory_allocated(), torch.npu.memory_reserved())
b = torch.empty(1000, dtype=torch.float32, device="npu")  # reuses the cached block
print("reuse", torch.npu.memory_allocated(), torch.npu.memory_reserved())
del b
torch.npu.empty_cache()
print("empty_cache", torch.npu.memory_allocated(), torch.npu.memory_reserved())
big = torch.empty(3 * 2**20 + 1, dtype=torch.uint8, device="npu")  # rounds to 2 MiB pages
print("large", torch.npu.memory_allocated(), torch.npu.max_memory_allocated())
del big
torch.npu.reset_peak_memory_stats()
print("peak_reset", torch.npu.max_memory_allocated())
free, total = torch.npu.mem_get_info()
print("mem_get_info", total, free <= total)
print("summary", "NPU reserved memory" in torch.npu.memory_summary())
torch.npu.set_per_process_memory_fraction(0.5)
try:
    torch.empty(40 * 2**30, dtype=torch.uint8, device="npu")
except torch.OutOfMemoryError as e:
    print("fraction", e)
torch.npu.set_per_process_memory_fraction(1.0)
keep = [torch.empty(20 * 2**30, dtype=torch.uint8, device="npu") for _ in range(3)]
keep.append(torch.empty(2 * 2**30, dtype=torch.uint8, device="npu"))
