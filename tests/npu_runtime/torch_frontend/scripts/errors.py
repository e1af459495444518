"""Bad input on the npu device: each case fails at its own line (argv[1] picks the case)."""

import sys

import torch
import torch_npu

case = sys.argv[1]
x = torch.ones(3, device="npu")
if case == "mixed":
    y = x + torch.ones(3)
elif case == "two_npus":
    y = x + torch.ones(3, device="npu:1")
elif case == "not_emulated":
    q = torch.linalg.qr(torch.ones(3, 3, device="npu"))
elif case == "cpu_into_fused":
    y = torch_npu.npu_rms_norm(x, torch.ones(3))
print("not reached")
