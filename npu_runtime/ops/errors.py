"""The ACL codes op validation returns, and the exception that carries one.

Values are the CANN header constants (acl_base.h); tests check them against
../shared/reference/acl/error_codes.json so they cannot drift.
"""

from __future__ import annotations

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_OP_TYPE_NOT_MATCH = 100020
ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
ACL_ERROR_OP_NOT_FOUND = 100024
ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
ACL_ERROR_FORMAT_NOT_MATCH = 100027
# A Cube/Vector kernel produced NaN/Inf: the device reports it as an overflow.
ACL_ERROR_RT_AICORE_OVER_FLOW = 207003
ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016
# A kernel read outside its tensor (e.g. a Gather index out of range).
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
# A kernel's input or output buffer is not live device memory.
ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042
ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043

NAMES: dict[int, str] = {
    v: k for k, v in globals().items() if k.startswith("ACL_ERROR_") and isinstance(v, int)
}


class OpError(Exception):
    """Bad input to an op: carries the ACL code pyACL returns for it and a readable reason."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def name(self) -> str:
        return NAMES.get(self.code, str(self.code))

    def __str__(self) -> str:
        return f"{self.name} ({self.code}): {self.message}"
