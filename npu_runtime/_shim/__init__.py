"""Directory the launchers put on sys.path so that `import acl` finds the emulator.

A package only so that wheels ship it; nothing imports it as npu_runtime._shim.
"""
