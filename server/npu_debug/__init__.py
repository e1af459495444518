"""Ascend Lens debug adapter: a DAP relay over debugpy that adds what only the NPU runtime knows.

`ascend-lens debug-adapter` speaks DAP on stdio. Everything the editor sends is relayed to
debugpy's own adapter; this package intercepts only launch (run under the emulated runtime),
setExceptionBreakpoints (the "ACL errors" filter), exceptionInfo and stopped events for ACL
failures, and adds the `ascendProfile` event. See docs/debugging.md.
"""
