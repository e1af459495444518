"""Reads a value back: under --estimate this line must fail with a clear message."""

import torch
import torch_npu  # noqa: F401 (registers the npu device)

x = torch.randn(4, 4, device="npu")
y = (x @ x).sum()
if y > 0:
    print("positive")
