"""Estimate mode (`ascend-lens run --estimate`): torch_npu scripts with shapes and dtypes only."""
