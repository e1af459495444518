import torch
import torch_npu  # noqa: F401

w = torch.randn(256, 256, device="npu")
x = torch.randn(32, 256, device="npu")
y = torch.relu(x @ w)  # @matmul
z = (y * 2).sum()  # @reduce
print("checkpoint")  # @checkpoint
