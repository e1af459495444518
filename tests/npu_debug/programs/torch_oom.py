import torch
import torch_npu  # noqa: F401

keep = []
for _ in range(4):
    keep.append(torch.empty(20 * 2**30, dtype=torch.uint8, device="npu"))  # @oom
print("not reached")
