"""A GPT built from a config (1.3b or 7b) on the npu default device: one bf16-autocast
AdamW training step, meant for `ascend-lens run --estimate` (shapes only)."""

import json
import math
import sys

import torch
import torch.nn as nn
import torch_npu

CONFIGS = {
    "1.3b": dict(d=2048, layers=24, heads=16, ffn=5120),
    "7b": dict(d=4096, layers=32, heads=32, ffn=11008),
}
cfg = CONFIGS[sys.argv[1]]
VOCAB, SEQ, BATCH = 50304, 2048, 1


class Block(nn.Module):
    def __init__(self, d, h, ffn):
        super().__init__()
        self.h = h
        self.n1 = nn.Parameter(torch.ones(d))
        self.n2 = nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        q, k, v = self.qkv(torch_npu.npu_rms_norm(x, self.n1)[0]).chunk(3, dim=-1)
        scale = 1 / math.sqrt(q.shape[-1] // self.h)
        a = torch_npu.npu_fusion_attention(q, k, v, self.h, "BSH", scale=scale, sparse_mode=2)[0]
        x = x + self.proj(a)
        return x + self.down(torch_npu.npu_swiglu(self.up(torch_npu.npu_rms_norm(x, self.n2)[0])))


class GPT(nn.Module):
    def __init__(self, d, layers, heads, ffn):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d)
        self.blocks = nn.ModuleList(Block(d, heads, ffn) for _ in range(layers))
        self.head = nn.Linear(d, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


torch.set_default_device(torch.device("npu"))
model = GPT(**cfg)
numels = [p.numel() for p in model.parameters()]
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
idx = torch.randint(0, VOCAB, (BATCH, SEQ))
with torch.autocast("npu", dtype=torch.bfloat16):
    logits = model(idx)
    loss = nn.functional.cross_entropy(logits.view(-1, VOCAB).float(), idx.view(-1))
loss.backward()
opt.step()
opt.zero_grad(set_to_none=True)
torch.npu.synchronize()
after = torch.npu.memory_allocated()
print(json.dumps({"numels": numels, "after_step": after, "peak": torch.npu.max_memory_allocated()}))
