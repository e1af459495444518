"""Ascend Lens's emulated Ascend runtime: AscendCL semantics, real ACL error codes, NPU numerics."""
