"""Offline models: ONNX graphs compiled by `ascend-lens atc` into the emulator's `.om`.

- `om`: the container format (docs/model.md), read and written here only.
- `compiler` + `atc`: ATC's command line over an ONNX model (shapes, dynamic gears,
  precision mode, the ONNX node -> Ascend op table in npu_runtime/data/onnx_ops.json).
- `loaded`: a model loaded on a device (`acl.mdl` is a thin layer over it): its memory,
  its descriptions and `execute`, which computes with an ONNX executor and puts one work
  record per node on the stream.
"""
