"""NPU numerics: Cube ops in fp16/bf16 accumulate in float32 and round once; fp16 overflows
to inf. Prints `name value` lines."""

import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

torch.manual_seed(0)
a, b = torch.randn(64, 4096), torch.randn(4096, 64)
for dt in (torch.float16, torch.bfloat16):
    cube = (a.to(dt).float() @ b.to(dt).float()).to(dt)  # the Cube: fp32 accumulation, one rounding
    npu = (a.to(dt).npu() @ b.to(dt).npu()).cpu()
    print(f"matmul_{dt}", (npu.float() - cube.float()).abs().max().item())
x, w = torch.randn(2, 64, 16, 16).half(), torch.randn(64, 64, 3, 3).half()
cube = F.conv2d(x.float(), w.float(), padding=1).half()
print(
    "conv2d_fp16",
    (F.conv2d(x.npu(), w.npu(), padding=1).cpu().float() - cube.float()).abs().max().item(),
)
big = torch.tensor([60000.0, -60000.0], dtype=torch.float16, device="npu")
print("fp16_overflow", (big * 2).cpu().tolist())
