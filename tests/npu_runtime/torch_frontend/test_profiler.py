"""torch_npu.profiler under `ascend-lens run`: schedule cycles become *_ascend_pt directories."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from torch_support import SCRIPTS, run


def _rows(rank: Path, name: str) -> list[dict[str, str]]:
    with open(rank / "ASCEND_PROFILER_OUTPUT" / name, newline="") as f:
        return list(csv.DictReader(f))


def test_schedule_writes_one_ascend_pt_per_active_cycle(tmp_path: Path) -> None:
    out = tmp_path / "tb"
    r = run("--no-summary", SCRIPTS / "profiled_training.py", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done 12\n"
    ranks = sorted(out.glob("*_ascend_pt"))
    # skip_first=1, then (wait 1, warmup 1, active 2) twice: two cycles of two steps each
    assert len(ranks) == 2
    for rank in ranks:
        assert (rank / "profiler_info_0.json").is_file()
        steps = [row["Step"] for row in _rows(rank, "step_trace_time.csv")]
        assert len(steps) == 2
        kernels = _rows(rank, "kernel_details.csv")
        types = {k["Type"] for k in kernels}
        assert {"MatMulV2", "Relu", "ReluGrad"} <= types, types
        # one step's work: forward, loss, backward and SGD of the same ops in both steps
        per_step: dict[str, int] = {}
        for k in kernels:
            per_step[k["Step Id"]] = per_step.get(k["Step Id"], 0) + 1
        assert len(per_step) == 2 and len(set(per_step.values())) == 1, per_step
        trace = json.loads((rank / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
        assert any(e.get("name", "").startswith("ProfilerStep#") for e in trace)
