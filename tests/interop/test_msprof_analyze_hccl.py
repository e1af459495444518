"""msprof-analyze cluster and compare on an emulated 8-rank DDP job (`ascend-lens run --nproc 8`)."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from interop_support import SCRIPTS, Tools


def _run_job(tmp_path: Path) -> Path:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NPU_", "HCCL_", "RANK", "MASTER_"))
    }
    res = subprocess.run(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", "--nproc", "8",
         "--profile", "prof", "--profile-ascend-pt", "--profile-top", "0",
         str(SCRIPTS / "ddp_slow_rank.py")],
        cwd=tmp_path, env={**clean, "PYTHONPATH": ""}, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-4000:]
    return tmp_path / "prof"


def _rank_dir(prof: Path, rank: int) -> list[Path]:
    return [p for p in prof.glob("*_ascend_pt") if (p / f"profiler_info_{rank}.json").is_file()]


def test_cluster_analysis_and_compare_of_an_8_rank_job_see_the_collectives_and_the_slow_rank(
    tools: Tools, tmp_path: Path
) -> None:
    prof = _run_job(tmp_path)
    res = tools.run("msprof-analyze", "cluster", "-d", prof, "-m", "all", "-o", tmp_path / "out", cwd=tmp_path)  # fmt: skip
    out = tmp_path / "out" / "cluster_analysis_output"
    assert (out / "cluster_step_trace_time.csv").is_file(), res.stdout + res.stderr

    with open(out / "cluster_step_trace_time.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Type"] == "rank"]
    assert {(r["Step"], r["Index"]) for r in rows} == {(s, str(k)) for s in "123" for k in range(8)}
    assert all(float(r["Communication"]) > 0 for r in rows)
    # the step files the tool summed are ours, rank by rank
    for rank in range(8):
        (root,) = _rank_dir(prof, rank)
        with open(root / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv", newline="") as f:
            ours = {r["Step"]: r for r in csv.DictReader(f)}
        for r in rows:
            if r["Index"] == str(rank):
                assert float(r["Communication"]) == float(ours[r["Step"]]["Communication"])

    groups = json.loads((out / "communication_group.json").read_text())
    assert groups["collective"] == [list(range(8))]
    (info,) = [g for g in groups["comm_group_parallel_info"] if g["type"] == "collective"]
    assert info["pg_name"] == "default_group"

    comm = json.loads((out / "cluster_communication.json").read_text())
    (group_key,) = comm
    assert group_key == str(tuple(range(8)))
    step3 = comm[group_key]["step3"]
    ops = [k for k in step3 if k.startswith("hcom_allReduce")]
    assert ops
    waits = {
        int(r): v["Communication Time Info"]["Wait Time(ms)"] for r, v in step3[ops[0]].items()
    }
    # everyone waits for the slow rank 3, which waits least
    assert min(waits, key=lambda r: waits[r]) == 3
    assert all(waits[r] > waits[3] for r in waits if r != 3)

    matrix = json.loads((out / "cluster_communication_matrix.json").read_text())
    links = matrix[group_key]["step3"]
    total = next(v for k, v in links.items() if k.startswith("allreduce-total"))
    assert total["0-1"]["Transport Type"] == "HCCS" and total["0-1"]["Transit Size(MB)"] > 0

    # compare of the slow rank against rank 0: rank 0's uncovered communication is waiting
    (slow,) = _rank_dir(prof, 3)
    (base,) = _rank_dir(prof, 0)
    tools.run(
        "msprof-analyze", "compare", "-d", slow, "-bp", base, "-o", tmp_path / "cmp", cwd=tmp_path
    )
    (xlsx,) = (tmp_path / "cmp").glob("performance_comparison_result_*.xlsx")
    book = tools.workbook(xlsx)
    overall = {r[0].strip(): r for r in book["OverallMetrics"] if r and isinstance(r[0], str)}
    assert overall["default_group: Communication"][1] > 0
    wait, transmit = overall["Wait"], overall["Transmit"]
    assert wait[1] > 0 and wait[4] == 0  # rank 0 waits for rank 3; rank 3 never waits
    assert transmit[1] == transmit[4] > 0  # the same bytes over the same links
    assert any(r and r[1] == "allreduce" for r in book["CommunicationCompare"])

    # the advisor's cluster analysis (the ranks' directories side by side in prof/): its
    # slow-rank table has rank 3 computing longest and the others spending that time in
    # communication (waiting for it)
    tools.run("msprof-analyze", "advisor", "all", "-d", prof, "-o", tmp_path / "adv", "-l", "en", cwd=tmp_path)  # fmt: skip
    (page,) = (tmp_path / "adv").glob("mstt_advisor_*.html")
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text())))
    table = text.split("overall slow rank", 1)[1].split(
        "compute(us) communication(us) free(us)", 1
    )[1]
    rows = re.findall(r"(\d+) (\d+) ([\d.]+) ([\d.]+) ([\d.]+)", table)[: 3 * 8]
    step3 = {int(r): (float(c), float(m)) for s, r, c, m, _ in rows if s == "3"}
    assert set(step3) == set(range(8))
    assert max(step3, key=lambda r: step3[r][0]) == 3
    assert min(step3, key=lambda r: step3[r][1]) == 3
