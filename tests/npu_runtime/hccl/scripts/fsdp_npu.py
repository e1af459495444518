"""FSDP2 (fully_shard) training of a small MLP on npu:LOCAL_RANK over backend="hccl".

FSDP frees each unsharded parameter's storage after use and re-allocates it before the
next all-gather (`untyped_storage().resize_()`), on its own all-gather and reduce-scatter
streams. Each rank takes its slice of one global batch; after STEPS steps it saves the
full parameters (CPU) to OUT_DIR/rank<r>.pt for the test to compare with single-process
training on the whole batch.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401
from torch.distributed.fsdp import fully_shard

STEPS, GLOBAL_BATCH = 2, 32

local_rank = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local_rank)
dist.init_process_group(backend="hccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)).npu()
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(1)
for _ in range(STEPS):
    x = torch.randn(GLOBAL_BATCH, 16, generator=gen)
    y = torch.randn(GLOBAL_BATCH, 4, generator=gen)
    per = GLOBAL_BATCH // world
    xs, ys = x[rank * per : (rank + 1) * per].npu(), y[rank * per : (rank + 1) * per].npu()
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(xs), ys).backward()
    opt.step()
devices = {str(p.device) for p in model.parameters()}
assert devices == {f"npu:{local_rank}"}, devices
full = {n: p.full_tensor().detach().cpu() for n, p in model.named_parameters()}
torch.save(full, os.path.join(sys.argv[1], f"rank{rank}.pt"))
print(f"rank {rank} fsdp trained {STEPS} steps")
dist.destroy_process_group()
