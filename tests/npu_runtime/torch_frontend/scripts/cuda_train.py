"""A CUDA training script, unchanged but for the two torch_npu imports."""

import torch
import torch.nn as nn
import torch_npu  # noqa: F401
from torch_npu.contrib import transfer_to_npu  # noqa: F401

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.cuda.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler()
x = torch.randn(64, 16, device="cuda")
y = torch.randint(0, 4, (64,)).to(device)
for step in range(5):
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    print(f"step {step} loss {loss.item():.4f}")
print(x.device, x.is_cuda, torch.cuda.get_device_name(0), torch.cuda.memory_allocated() > 0)
