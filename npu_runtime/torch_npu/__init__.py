"""torch_npu for the emulated NPU: `import torch_npu` under the Ascend Lens launchers.

Importing registers PyTorch's PrivateUse1 device as `npu` (see device.py) with storage
from the runtime's allocator and every aten op charged to the emulated device (aten.py).
The seam other front ends use is documented in npu_runtime/torch_npu/_backend.py.
"""

from __future__ import annotations

try:
    import torch
except ModuleNotFoundError as _exc:  # pragma: no cover - exercised without the extra
    if _exc.name != "torch":
        raise
    raise ModuleNotFoundError(
        "torch_npu on Ascend Lens needs PyTorch: pip install ascend-lens[torch]", name="torch"
    ) from None

from npu_runtime.torch_npu import device as _device

_device.setup()

from npu_runtime.torch_npu import contrib, npu, profiler  # noqa: E402
from npu_runtime.torch_npu.fused import (  # noqa: E402
    get_npu_format,
    npu_format_cast,
    npu_fusion_attention,
    npu_rms_norm,
    npu_rotary_mul,
    npu_swiglu,
)

__version__ = "2.6.0.post3+ascendlens"
__all__ = [
    "contrib",
    "get_npu_format",
    "npu_format_cast",
    "npu",
    "npu_fusion_attention",
    "npu_rms_norm",
    "npu_rotary_mul",
    "npu_swiglu",
    "profiler",
]

from npu_runtime.hccl.process_group import register as _register_hccl  # noqa: E402

_register_hccl()  # backend="hccl" for torch.distributed, on npu tensors
del torch
