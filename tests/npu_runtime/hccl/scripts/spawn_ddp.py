"""DDP launched with torch.multiprocessing.spawn (no torchrun): each spawned rank imports
torch_npu itself, sets its device and joins the hccl group over a TCP store."""

import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_npu  # noqa: F401


def worker(rank: int, world: int, port: str) -> None:
    torch.npu.set_device(rank)
    dist.init_process_group(
        "hccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).npu()
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    x = torch.full((2, 4), float(rank + 1)).npu()
    ddp(x).sum().backward()
    # d(sum)/dW over both ranks' data: the mean of the per-rank gradients.
    expect = torch.full((2, 4), (2 * 1.0 + 2 * 2.0) / 2)
    assert torch.equal(model.weight.grad.cpu(), expect), model.weight.grad.cpu()
    t = torch.ones(3).npu() * (rank + 1)
    dist.all_reduce(t)
    sys.stdout.write(f"rank {rank}: {t.cpu().tolist()} on {model.weight.grad.device}\n")
    sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, sys.argv[1]), nprocs=2)
