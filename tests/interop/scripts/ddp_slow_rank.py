"""Three DDP steps on every rank; rank 3 does extra work each step (a slow rank).

Steps are marked with npu_runtime.step() so each rank's profile splits the same way.
Every rank trains on its own npu:0 (torch 2.13's Python device guard runs autograd on
device 0 only; each rank is its own process with its own emulated devices).
"""

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

import npu_runtime

torch.npu.set_device(0)
dist.init_process_group(backend="hccl")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64)
).npu()
ddp = torch.nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _ in range(3):
    x = torch.randn(64, 256, device="npu")
    if rank == 3:
        for _ in range(20):  # the slow rank: extra compute before its step
            x = torch.tanh(x @ torch.eye(256, device="npu"))
    opt.zero_grad()
    ddp(x).square().mean().backward()
    opt.step()
    npu_runtime.step()
dist.destroy_process_group()
