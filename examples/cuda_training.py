"""A PyTorch training script written for NVIDIA GPUs, to migrate to Ascend (torch_npu).

    ascend-lens check examples/cuda_training.py

lists what to change, line by line; in the editor, the findings marked [*] are quick fixes,
and one source action migrates the whole file to torch_npu.
"""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        return self.out(y.transpose(1, 2).reshape(b, n, d))


def main() -> None:
    rank = int(os.environ.get("RANK", "0"))
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(rank)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda", rank)

    model = Attention(256, 8).cuda()
    model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.cuda.amp.GradScaler()

    for step in range(100):
        batch = torch.randn(8, 128, 256).to("cuda:0")
        target = torch.randn(8, 128, 256, device=device)
        with torch.cuda.amp.autocast():
            loss = F.mse_loss(model(batch), target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 10 == 0 and rank == 0:
            torch.cuda.synchronize()
            print(step, loss.item(), torch.cuda.max_memory_allocated() >> 20, "MiB")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
