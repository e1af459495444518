"""One all_reduce of 1 MiB per rank; prints the records' algorithm and link traffic."""

import os

import torch
import torch.distributed as dist
import torch_npu  # noqa: F401

from npu_runtime.core import hooks

records = []
hooks.add_work_listener(records.append)
local = int(os.environ["LOCAL_RANK"])
torch.npu.set_device(local)
dist.init_process_group(backend="hccl")
t = torch.full((2**18,), float(dist.get_rank()), device=torch.device("npu", local))
dist.all_reduce(t)
world = dist.get_world_size()
assert t[0].item() == world * (world - 1) / 2, t[0].item()
comm = [r for r in records if r.kind == "comm"][-1]
links = ",".join(f"{k}={int(b)}" for k, b, _ in comm.comm.transit)
print(
    f"rank {dist.get_rank()} sum ok algorithm {comm.comm.algorithm} links {links} us {comm.duration_us:.1f}"
)
