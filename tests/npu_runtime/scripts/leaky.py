"""Misuses for the sanitizer: a leak, a double free; exits 7."""

import sys

import acl

acl.init()
acl.rt.set_device(0)
kept, _ = acl.rt.malloc(4096, 0)
gone, _ = acl.rt.malloc(64, 0)
acl.rt.free(gone)
print("double free ->", acl.rt.free(gone))
sys.exit(7)
