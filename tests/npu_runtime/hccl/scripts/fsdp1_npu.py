"""FSDP1 (FullyShardedDataParallel) training of a small MLP on npu:LOCAL_RANK over hccl.

The CPU model is moved to the device by FSDP itself (`device_id=`: `param.data = ...npu`),
parameters are flattened, sharded and re-gathered each step (storage resize), gradients
reduce-scattered on FSDP's own streams (`record_stream`). Saves the full parameters (CPU)
after STEPS steps to OUT_DIR/rank<r>.pt.
"""

import os
import sys

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

STEPS, GLOBAL_BATCH = 2, 32

local_rank = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local_rank)
dist.init_process_group(backend="hccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
fsdp = FSDP(model, device_id=torch.device("npu", local_rank), use_orig_params=True)
opt = torch.optim.SGD(fsdp.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(1)
for _ in range(STEPS):
    x = torch.randn(GLOBAL_BATCH, 16, generator=gen)
    y = torch.randn(GLOBAL_BATCH, 4, generator=gen)
    per = GLOBAL_BATCH // world
    xs, ys = x[rank * per : (rank + 1) * per].npu(), y[rank * per : (rank + 1) * per].npu()
    opt.zero_grad()
    torch.nn.functional.mse_loss(fsdp(xs), ys).backward()
    opt.step()
devices = {str(p.device) for p in fsdp.parameters()}
assert devices == {f"npu:{local_rank}"}, devices
with FSDP.summon_full_params(fsdp):
    full = {n: p.detach().cpu().clone() for n, p in fsdp.module.named_parameters()}
torch.save(full, os.path.join(sys.argv[1], f"rank{rank}.pt"))
print(f"rank {rank} fsdp1 trained {STEPS} steps")
dist.destroy_process_group()
