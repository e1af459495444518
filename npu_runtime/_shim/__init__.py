"""Directory the launchers put on sys.path so that `import acl` finds the emulator.

A package so that wheels ship it. SHIM_DIR is the one place every shell (launcher, kernel,
debug bootstrap) learns where it is: importing this module loads only `npu_runtime`'s
lazy `__init__`, never the runtime itself, so the kernel and the debuggee can put the shim
on sys.path before the user's code imports anything.
"""

import os

SHIM_DIR = os.path.dirname(os.path.abspath(__file__))
