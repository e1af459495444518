"""Tensor-parallel MLP forward (Megatron style) on npu:LOCAL_RANK, one all_reduce per layer pair.

The first linear is split by columns, the second by rows; each rank computes its partial
output and all_reduce sums them. Prints the full output's checksum against a
single-device computation of the same MLP.
"""

import os

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

local = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local)
dist.init_process_group(backend="hccl")
rank, world = dist.get_rank(), dist.get_world_size()
dev = torch.device("npu", local)
torch.manual_seed(0)
w1, w2 = torch.randn(64, 128), torch.randn(128, 64)
x = torch.randn(8, 64)
cols = 128 // world
w1_shard = w1[:, rank * cols : (rank + 1) * cols].to(dev)
w2_shard = w2[rank * cols : (rank + 1) * cols, :].to(dev)
partial = torch.relu(x.to(dev) @ w1_shard) @ w2_shard
dist.all_reduce(partial)  # sum of the row-parallel partial outputs
expected = torch.relu(x @ w1) @ w2
err = (partial.cpu() - expected).abs().max().item()
print(f"rank {rank} device {partial.device} max error {err:.2e}")
assert err < 1e-3, err
dist.destroy_process_group()
