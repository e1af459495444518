"""Ascend Lens language tooling: a pure rules engine (`npu_lsp.engine`) with graph-mode,
migration and HCCL rule families, shared by the language server and `ascend-lens check`."""
