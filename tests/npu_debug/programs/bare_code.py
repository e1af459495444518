"""Checks `ret` itself and stops on its own exception (or exit status) with the bare code."""

import sys

import acl

ret = acl.init()
ret = acl.rt.set_device(0)
ptr, ret = acl.rt.malloc(1 << 50, 0)  # @malloc: more than the device has
if ret != 0:
    if sys.argv[1:] == ["exit"]:
        sys.exit(ret)  # @exit
    raise Exception(f"malloc failed ret={ret}")  # @raise
