"""Data-parallel training of a small MLP with DistributedDataParallel on npu.

Each rank takes its slice of one global batch; after each step it saves its gradients and
parameters (as CPU tensors) to OUT_DIR/rank<r>.pt for the test to compare with plain
single-process training on the whole batch.

Each rank trains on its own device npu:LOCAL_RANK, as torchrun scripts do
(`torch.npu.set_device(local_rank)`, `model.npu()`, `device_ids=[local_rank]`).
"""

import os
import sys

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

STEPS, GLOBAL_BATCH = 2, 32

local_rank = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local_rank)
dist.init_process_group(backend="hccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)).npu()
ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(1)
saved = []
for _ in range(STEPS):
    x = torch.randn(GLOBAL_BATCH, 16, generator=gen)
    y = torch.randn(GLOBAL_BATCH, 4, generator=gen)
    per = GLOBAL_BATCH // world
    xs, ys = x[rank * per : (rank + 1) * per].npu(), y[rank * per : (rank + 1) * per].npu()
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(xs), ys)
    loss.backward()
    devices = {str(p.grad.device) for p in model.parameters()}
    assert devices == {f"npu:{local_rank}"}, devices
    saved.append({n: p.grad.cpu() for n, p in model.named_parameters()})
    opt.step()
    torch_npu.npu.synchronize()
params = {n: p.detach().cpu() for n, p in model.named_parameters()}
torch.save({"grads": saved, "params": params}, os.path.join(sys.argv[1], f"rank{rank}.pt"))
print(f"rank {rank} trained {STEPS} steps")
dist.destroy_process_group()
