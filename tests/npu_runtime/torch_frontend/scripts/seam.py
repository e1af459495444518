"""The seam other front ends use (npu_runtime/torch_npu/_backend.py): from_cpu, host_view,
charge. Prints one labelled line per check."""

import torch
import torch_npu  # noqa: F401

from npu_runtime.core.launch import Cost
from npu_runtime.torch_npu import _backend as B

t = B.from_cpu(torch.arange(4.0), 0)
print("from_cpu", t.device, t.cpu().tolist())
B.host_view(t).mul_(2)  # writes the device memory itself
print("host_view", t.cpu().tolist())
rec = B.charge(0, "HcomAllReduce", Cost(12.5, "memory", "AI_CPU"), (B.info(t),), (B.info(t),))
print("charge", rec.op_type, rec.duration_us, rec.site.line, rec.stream)
