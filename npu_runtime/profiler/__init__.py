"""msprof-style profiler for the emulated runtime.

Collects `WorkRecord`s through the runtime's work listeners and writes
`op_summary_<ts>.csv` (msprof's header), a Chrome trace and the per-line JSON
(docs/profile-format.md). Entry points: `profile()`, `acl.prof`, `ascend-lens run --profile`.
"""

from npu_runtime.profiler.lines import SCHEMA, aggregate
from npu_runtime.profiler.session import Profiler, profile

__all__ = ["SCHEMA", "Profiler", "aggregate", "profile"]
