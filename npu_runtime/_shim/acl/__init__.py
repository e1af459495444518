"""`import acl` for scripts run under Ascend Lens: the emulator's pyACL-compatible module.

This directory (npu_runtime/_shim) is put on sys.path only by the launchers (ascend-lens
run, the Jupyter kernel, the debug adapter); it is never installed as a global `acl`.
The module replaces itself with npu_runtime.acl, so `acl`, `acl.rt`, ... are the very
same objects as npu_runtime.acl, npu_runtime.acl.rt, ...
"""

import sys

import npu_runtime.acl as _acl

for _key, _mod in list(sys.modules.items()):
    if _key.startswith("npu_runtime.acl.") and _mod is not None:
        sys.modules["acl." + _key[len("npu_runtime.acl.") :]] = _mod
sys.modules["acl"] = _acl
