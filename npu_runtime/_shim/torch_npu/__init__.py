"""`import torch_npu` for scripts run under Ascend Lens: the emulator's torch_npu.

Put on sys.path only by the launchers (like `_shim/acl`), never installed as a global
module. It replaces itself with npu_runtime.torch_npu so `torch_npu.npu`, ... are the very
same modules. Without PyTorch the import fails with one line saying how to install it.
"""

import sys

try:
    import torch  # noqa: F401
except ModuleNotFoundError as _exc:
    if _exc.name != "torch":
        raise
    raise SystemExit(
        "ascend-lens: torch_npu needs PyTorch, which is not installed: pip install ascend-lens[torch]"
    ) from None

import npu_runtime.torch_npu as _impl

for _key, _mod in list(sys.modules.items()):
    if _key.startswith("npu_runtime.torch_npu.") and _mod is not None:
        sys.modules["torch_npu." + _key[len("npu_runtime.torch_npu.") :]] = _mod
sys.modules["torch_npu"] = _impl
