"""`torch.compile(model, backend="npu")`: the dynamo backend torch_npu registers.

torch_npu built without torchair registers an eager `npu` backend (the captured FX graph
runs op by op); the emulator does the same, so every op of the graph still lands on the
emulated device, its clock and its profile. PyTorch finds this function through the
`torch_dynamo_backends` entry point of the ascend-lens distribution (its own mechanism for
out-of-tree backends), so `import torch_npu` does not pay for importing dynamo. A real
torch_npu registers `npu` itself and takes precedence; outside the launchers this backend
refuses with one clear line instead of running on the CPU. It lives outside
npu_runtime.torch_npu because importing that package registers the device.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def npu_backend(gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
    # Looked up, not imported: importing npu_runtime.torch_npu would register the device.
    device = sys.modules.get("npu_runtime.torch_npu.device")
    if device is None or not device.is_set_up():
        raise RuntimeError(
            "torch.compile backend 'npu' needs torch_npu: run the script under `ascend-lens run` "
            "(the emulated NPU) or install Huawei's torch_npu on a machine with an NPU"
        )
    return gm
