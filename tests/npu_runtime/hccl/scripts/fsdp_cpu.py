"""FSDP2 (fully_shard) training over backend="hccl" on CPU tensors.

FSDP frees and re-allocates parameter storage (storage resize), which torch 2.13 lets only
C++ device backends implement, not the Python-defined npu device; the hccl process group
itself serves FSDP's all-gathers and reduce-scatters the same way for both.
Saves the full parameters after one step to OUT_DIR/rank<r>.pt.
"""

import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from npu_runtime.hccl.process_group import register

register()  # what `import torch_npu` does; this process has no npu device
dist.init_process_group(backend="hccl")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
gen = torch.Generator().manual_seed(1)
x, y = torch.randn(32, 16, generator=gen), torch.randn(32, 4, generator=gen)
per = 32 // world
loss = torch.nn.functional.mse_loss(
    model(x[rank * per : (rank + 1) * per]), y[rank * per : (rank + 1) * per]
)
loss.backward()
opt.step()
full = {n: p.full_tensor().detach() for n, p in model.named_parameters()}
torch.save(full, os.path.join(sys.argv[1], f"rank{rank}.pt"))
print(f"rank {rank} fsdp step done")
dist.destroy_process_group()
