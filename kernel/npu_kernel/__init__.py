"""The Ascend Lens Jupyter kernel: IPython on an emulated Ascend NPU.

Importing this package is cheap on purpose: the kernel class, magics and runtime are
imported only by the modules that need them.
"""

KERNEL_NAME = "ascend-npu"
DISPLAY_NAME = "Python 3 (Ascend NPU, emulated)"
STATE_COMM_TARGET = "ascend-lens.state"
PROFILE_MIME = "application/vnd.ascend-lens.profile+json"

__all__ = ["DISPLAY_NAME", "KERNEL_NAME", "PROFILE_MIME", "STATE_COMM_TARGET"]
