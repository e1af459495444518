"""The emulated runtime's core: one state, raising AclError; acl/ and the Pythonic API translate.

Modules, one job each:
    runtime    the process-wide Runtime (get_runtime): lifecycle, devices, contexts, errors
    device     one device: memory, streams, the host's position on its simulated clock
    sched      streams, events, synchronisation and callbacks
    transfer   malloc/free, memcpy/memset, memory info
    memory     the device allocator and its lazily backed address space
    hostmem    the registry of host buffers whose real addresses may be touched
    launch     submit(): the one path work takes onto a stream
    sanitizer  findings no hardware reports
    faults     error injection (NPU_INJECT, --inject)
    hooks      listeners for work records, errors and stream waits
    summary    the run summary `ascend-lens run` prints
"""
