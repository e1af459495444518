"""Collectives that go wrong on purpose, chosen by the CASE variable."""

import os
import time

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

case = os.environ["CASE"]
torch.npu.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group(backend="hccl")
rank = dist.get_rank()
dev = torch.device("npu", int(os.environ["LOCAL_RANK"]))
t = torch.ones(4, 4, device=dev)
dist.all_reduce(t)  # everyone agrees on the first one
if case == "skip":
    if rank != 1:
        dist.all_reduce(t)  # rank 1 skips this one and finishes
elif case == "shape":
    dist.all_reduce(torch.ones(4, 4 if rank == 0 else 8, device=dev))
elif case == "dtype":
    dist.all_reduce(torch.ones(4, device=dev, dtype=torch.float32 if rank == 0 else torch.float16))
elif case == "order":
    if rank == 0:
        dist.broadcast(t, src=0)
    else:
        dist.all_reduce(t)
elif case == "stuck":
    if rank == 1:
        time.sleep(600)  # a rank busy elsewhere: the others time out
    dist.all_reduce(t)
elif case == "recv" and rank == 0:
    dist.send(t, dst=1)  # rank 1 never receives
print(f"rank {rank} finished")
