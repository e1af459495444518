"""Real `torch.load(weights_only=True)` reads the `.pt` files the dump writes without torch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
from interop_support import Tools

from npu_runtime.dump.names import torch_dtype
from npu_runtime.dump.torch_file import save

_LOAD = """
import json, sys, torch
out = {}
for path in sys.argv[1:]:
    t = torch.load(path, weights_only=True)
    out[path] = [str(t.dtype), list(t.shape), t.double().flatten().tolist(), t.is_contiguous()]
print(json.dumps(out))
"""

DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.bool_, np.int8, np.uint8,
          np.int16, np.int32, np.int64, np.uint16, np.uint32]  # fmt: skip


def test_torch_loads_every_dtype_with_the_values_and_dtype_dump_json_names(
    tools: Tools, tmp_path: Path
) -> None:
    values = np.array([[0.5, -1.0, 2.0], [3.0, 65504.0, -0.0]])
    expected = {}
    for dt in DTYPES:
        a = values.astype(dt) if np.dtype(dt).kind == "f" else np.abs(values).astype(dt)
        path = tmp_path / f"{np.dtype(dt).name}.pt"
        save(a, path)
        expected[str(path)] = (np.dtype(dt), a)
    res = subprocess.run(
        [str(tools.venv / "bin/python"), "-c", _LOAD, *expected],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    for path, (dtype, shape, flat, contiguous) in json.loads(res.stdout).items():
        np_dtype, a = expected[path]
        saved_as = torch_dtype(np_dtype)
        # dump.json names the tensor's own dtype; the file holds it, or int64 when torch
        # has no storage for it (uint16/uint32).
        assert dtype == (saved_as.torch if saved_as.save_as == np_dtype.name else "torch.int64")
        assert shape == [2, 3] and contiguous
        assert flat == a.astype(np.float64).ravel().tolist(), np_dtype
