"""untyped_storage().resize_() on npu:1: grow, shrink to 0, regrow; values kept."""

import torch
import torch_npu  # noqa: F401

t = torch.arange(8, dtype=torch.float32, device="npu:1")
s = t.untyped_storage()
before = torch.npu.memory_allocated(1)
s.resize_(4096)  # grow: the first 32 bytes (8 floats) are kept
grown = torch.empty(0, dtype=torch.float32, device="npu:1").set_(s, 0, (1024,), (1,))
print(
    "grow", s.nbytes(), s.device, grown[:8].cpu().tolist(), torch.npu.memory_allocated(1) - before
)
s.resize_(0)
print("shrink", s.nbytes(), s.data_ptr(), torch.npu.memory_allocated(1) - before)
s.resize_(16)
grown[:4].copy_(torch.tensor([1.5, 2.5, 3.5, 4.5]))
print("regrow", s.nbytes(), grown[:4].cpu().tolist())
s.resize_(8)  # shrink, not to 0: the first 2 floats stay
print("shrink_keep", s.nbytes(), grown[:2].cpu().tolist())
try:
    s.resize_(1 << 62)
except torch.OutOfMemoryError as exc:
    print("oom", s.nbytes(), str(exc).splitlines()[0])
