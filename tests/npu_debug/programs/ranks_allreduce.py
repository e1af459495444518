"""One rank of a 2-rank job: all_reduce its rank and print the sum."""

import os

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

local = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local)
dist.init_process_group(backend="hccl")
t = torch.tensor([float(dist.get_rank() + 1)], device=torch.device("npu", local))
dist.all_reduce(t)
total = t.item()  # @after_reduce
print(f"rank {dist.get_rank()} total {total}")
dist.destroy_process_group()
