"""Directory the launchers put on sys.path so that `import acl` finds the emulator.

A package so that wheels ship it. SHIM_DIR is its path for code that already imports
npu_runtime (the launcher); the kernel and the debug bootstrap locate it with find_spec
instead, because they must not import npu_runtime before the user's code does.
"""

import os

SHIM_DIR = os.path.dirname(os.path.abspath(__file__))
