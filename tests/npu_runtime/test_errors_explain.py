"""explain(): a script's own exception naming the last failing ACL code gets its meaning."""

from __future__ import annotations

from npu_runtime.errors import AclError
from npu_runtime.errors.explain import LastError, explain
from npu_runtime.records import SourceSite


def _last(code: int) -> AclError:
    last = LastError()
    last(AclError(code, "aclrtMalloc", "cannot allocate", site=SourceSite("u.py", 7)))
    last(AclError(207001, kind="sanitizer", check="leak"))  # findings are not calls
    assert last.error is not None
    return last.error


def test_named_code_is_explained() -> None:
    text = explain(Exception("malloc failed ret=207001"), _last(207001))
    assert text.splitlines()[0] == (
        "ascend-lens: 207001 is ACL_ERROR_RT_MEMORY_ALLOCATION, returned by aclrtMalloc at u.py:7"
    )
    assert "    detail: cannot allocate" in text.splitlines()


def test_other_numbers_and_exits_are_left_alone() -> None:
    last = _last(207001)
    assert explain(Exception("ret=2070011"), last) == ""
    assert explain(ValueError("bad input"), last) == ""
    assert explain(Exception("x"), None) == ""
    assert explain(SystemExit(207001), last).startswith("ascend-lens: 207001")
    assert explain(SystemExit(1), last) == ""
    assert explain(RuntimeError("failed", 207001), last).startswith("ascend-lens: 207001")
