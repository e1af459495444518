"""The `ascend-lens` command line: one dispatcher above the parts (runtime, language server,
debug adapter, Jupyter kernel), so that no part has to name the others."""
