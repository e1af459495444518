"""msprof timestamps: microseconds since the epoch as a string with 3 decimals.

A double cannot hold epoch microseconds to the nanosecond (1.7e15 leaves ~0.25 µs of
resolution), so the epoch stays an int and the sum is done in integer nanoseconds.
The CSV and the trace share this function: msprof-analyze joins them on exact equality.
"""

from __future__ import annotations


def ts_string(epoch_us: int, t_us: float) -> str:
    """`epoch_us + t_us` printed with exactly 3 decimals, without float rounding loss."""
    total_ns = epoch_us * 1000 + round(t_us * 1000)
    sign = "-" if total_ns < 0 else ""
    whole, frac = divmod(abs(total_ns), 1000)
    return f"{sign}{whole}.{frac:03d}"
