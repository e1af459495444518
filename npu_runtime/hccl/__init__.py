"""HCCL on the emulated NPU: collectives between ranks, their simulated cost, and the checks.

Each rank is its own process with its own emulated device; the data moves over PyTorch's
gloo process groups (`process_group.py`), never a transport of our own. What HCCL would
have cost comes from the device profile's link figures (`cost.py` over `layout.py`), and
every collective is a WorkRecord on the device's communication stream (`record.py`), so
the profiler, lines.json and the msprof-analyze files see it like any other work.

Checks a real cluster makes hard: a collective entered by some ranks and not others, or
with different shapes or dtypes (`signature.py`), a rank table that disagrees with the
launch (`rank_table.py`), HCCL environment variables with wrong values (`env.py`).

Only `process_group.py` imports torch; the rest is plain Python for the cost model, the
launcher and the profiler.
"""
