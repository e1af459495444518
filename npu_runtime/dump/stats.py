"""One tensor's entry in msprobe's dump.json: type, dtype, shape and Max/Min/Mean/Norm.

msprobe computes the statistics of half-precision tensors in float32; sums here accumulate
in float64 for every type, so a float64 reference run keeps its precision. NaN and Inf stay in
the values (json writes them as NaN/Infinity, which msprobe's reader accepts): an
overflowed output must show as such in the compare.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npu_runtime.dump.names import torch_dtype
from npu_runtime.numerics import quiet


def _f(x: Any) -> float:
    return float(x)


def statistics(a: np.ndarray) -> dict[str, Any]:
    """Max, Min, Mean and Norm (L2) as msprobe writes them; None for an empty tensor.

    One float64 copy, then float64 reductions: numpy reduces float16 and bfloat16 without
    SIMD (a float16 max costs ~8x the copy), and float64 holds every device value exactly.
    """
    if a.size == 0:
        return {"Max": None, "Min": None, "Mean": None, "Norm": None}
    if a.dtype == np.bool_:
        return {"Max": bool(a.any()), "Min": bool(a.all()), "Mean": None, "Norm": None}
    v = a.astype(np.float64).ravel()
    with quiet():  # inf - inf and friends are expected in an overflowing run
        return {
            "Max": _f(v.max()),
            "Min": _f(v.min()),
            "Mean": _f(v.mean()),
            # Not np.linalg.norm: its BLAS dot spins up threads, milliseconds per small
            # tensor on a busy machine; a plain reduction is microseconds.
            "Norm": _f(np.sqrt(np.square(v).sum())),
        }


def tensor_entry(
    a: np.ndarray, data_name: str | None = None, declared: np.dtype | None = None
) -> dict[str, Any]:
    """The dump.json description of one tensor argument or result.

    `declared` names the dtype the program asked for when the values are held wider (a
    reference run): msprobe marks every row "error" when the two sides' dtypes differ, so
    a reference run must describe its tensors as the NPU run does.
    """
    entry: dict[str, Any] = {
        "type": "torch.Tensor",
        "dtype": torch_dtype(a.dtype if declared is None else declared).torch,
        "shape": list(a.shape),
        **statistics(a),
        "requires_grad": False,  # msprobe marks every result "error" when one side lacks it
    }
    if data_name is not None:
        entry["data_name"] = data_name
    return entry


def scalar_entry(value: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
    """A keyword argument (an op attribute) as msprobe describes it; None when unsupported.

    A list or tuple becomes a list of entries, one per element, as msprobe dumps sequences
    (its compare chokes on a list inside a `value`).
    """
    if isinstance(value, (bool, int, float, str)):
        return {"type": type(value).__name__, "value": value}
    if isinstance(value, (list, tuple)) and all(isinstance(x, (bool, int, float)) for x in value):
        return [{"type": type(x).__name__, "value": x} for x in value]
    return None
