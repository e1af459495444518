"""A small GPT (embedding, attention through npu_fusion_attention, RMSNorm, SwiGLU MLP)
trained for a few steps with fp16 autocast and GradScaler; prints the losses as JSON."""

import json
import math

import torch
import torch.nn as nn
import torch_npu


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, 8 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x, mask):
        d = x.shape[-1]
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        attn = torch_npu.npu_fusion_attention(
            q, k, v, self.heads, "BSH", atten_mask=mask, scale=1.0 / math.sqrt(d // self.heads)
        )[0]
        x = x + self.proj(attn)
        return x + self.down(torch_npu.npu_swiglu(self.up(self.norm2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        s = idx.shape[1]
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool, device=idx.device), diagonal=1)
        x = self.emb(idx)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x))


torch.manual_seed(0)
model = GPT().npu()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.npu.amp.GradScaler()
data = torch.randint(0, 64, (4, 17))
x, y = data[:, :-1].npu(), data[:, 1:].npu()
losses = []
for _step in range(8):
    with torch.autocast("npu", dtype=torch.float16):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.float().reshape(-1, 64), y.reshape(-1))
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    losses.append(loss.item())
print(json.dumps({"losses": losses, "logits_dtype": str(logits.dtype)}))
