"""overflow.py's computation in PyTorch on CPU, dumped by msprobe's own PrecisionDebugger.

Stands in for a dump taken on a real NPU: same API names (torch.matmul, F.gelu, torch.add,
torch.mul, F.softmax), same float16 inputs. Runs in the interop tools' venv (torch, msprobe):
    python torch_overflow.py DUMP_DIR
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from msprobe.pytorch import PrecisionDebugger

out = Path(sys.argv[1])
config = out.parent / "msprobe_config.json"
config.write_text(
    json.dumps(
        {"task": "statistics", "dump_path": str(out), "rank": [], "step": [], "level": "L1",
         "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"}}
    )
)  # fmt: skip
debugger = PrecisionDebugger(config_path=str(config))
rng = np.random.default_rng(0)  # the same draws, in the same order, as overflow.py
x = torch.from_numpy(rng.standard_normal((16, 64)).astype(np.float16))
w = torch.from_numpy((rng.standard_normal((64, 32)) * 0.1).astype(np.float16))
scale = torch.full((16, 32), 30000.0, dtype=torch.float16)
debugger.start()
h = F.gelu(torch.matmul(x, w))
h = torch.add(h, h)
s = torch.mul(h, scale)
p = F.softmax(s, dim=-1)
debugger.stop()
debugger.step()
