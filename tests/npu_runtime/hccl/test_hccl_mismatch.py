"""What hangs or corrupts a real cluster is reported here, at each rank's line, with no process
left behind: skipped collectives, different shapes, dtypes or ops, a rank that never comes,
an unmatched send, a rank table that does not fit the launch, wrong HCCL variables."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hccl_support import Run, ascend_lens, clean_env, script_copy


def _mismatch(tmp_path: Path, case: str, **env: str) -> tuple[Run, Path]:
    script = script_copy("mismatch.py", tmp_path)
    run = ascend_lens("--nproc", "2", script, cwd=tmp_path, env=clean_env(CASE=case, **env))
    return run, script


def _error(run: Run, rank: int) -> list[str]:
    """The rank's error report: the exception line and the indented rows under it."""
    lines = run.lines(rank, "stderr")
    start = next(i for i, ln in enumerate(lines) if "Error: " in ln)
    out = [lines[start]]
    for ln in lines[start + 1 :]:
        if not ln.startswith("  rank "):
            break
        out.append(ln)
    return out


def _line(script: Path, text: str) -> int:
    return next(i for i, ln in enumerate(script.read_text().splitlines(), 1) if text in ln)


@pytest.mark.usefixtures("no_leftovers")
def test_a_rank_that_skips_a_collective_is_named_with_the_line_each_rank_was_at(
    tmp_path: Path,
) -> None:
    run, script = _mismatch(tmp_path, "skip")
    assert run.returncode == 1
    first = _line(script, "dist.all_reduce(t)  # everyone")
    waiting = _line(script, "rank 1 skips")
    assert _error(run, 0) == [
        "npu_runtime.hccl.signature.CollectiveTimeoutError: HCCL collective allreduce #2 on "
        "group default_group (ranks 0-1): rank(s) 1 exited without entering it",
        f"  rank 0: waiting in allreduce at mismatch.py:{waiting}, float32 [4, 4], op sum",
        f"  rank 1: exited (process finished; last call: allreduce #1 on group default_group "
        f"(ranks 0-1) at mismatch.py:{first})",
    ]
    assert "rank 1 finished" in run.lines(1)
    assert run.stderr.splitlines()[-1] == "ascend-lens: rank 0 failed (exit code 1)"


@pytest.mark.usefixtures("no_leftovers")
@pytest.mark.parametrize(
    ("case", "problem", "rank0", "rank1"),
    [
        ("shape", "shapes differ", "allreduce at mismatch.py:{n}, float32 [4, 4], op sum",
         "allreduce at mismatch.py:{n}, float32 [4, 8], op sum"),
        ("dtype", "dtypes differ", "allreduce at mismatch.py:{n}, float32 [4], op sum",
         "allreduce at mismatch.py:{n}, float16 [4], op sum"),
        ("order", "ranks entered different collectives", "broadcast at mismatch.py:{b}, float32 [4, 4], root 0",
         "allreduce at mismatch.py:{a}, float32 [4, 4], op sum"),
    ],
)  # fmt: skip
def test_different_collectives_are_reported_by_every_rank_before_data_moves(
    tmp_path: Path, case: str, problem: str, rank0: str, rank1: str
) -> None:
    run, script = _mismatch(tmp_path, case)
    assert run.returncode == 1
    n = _line(script, f'case == "{case}"') + 1
    b = _line(script, "dist.broadcast(t, src=0)")
    a = b + 2  # the else branch's all_reduce
    fmt = {"n": n, "b": b, "a": a}
    expected = [
        f"npu_runtime.hccl.signature.CollectiveMismatchError: HCCL collective mismatch in call #2 "
        f"on group default_group (ranks 0-1): {problem}",
        "  rank 0: " + rank0.format(**fmt),
        "  rank 1: " + rank1.format(**fmt),
    ]
    assert _error(run, 0) == expected
    assert _error(run, 1) == expected


@pytest.mark.usefixtures("no_leftovers")
def test_a_rank_that_never_arrives_times_out_after_hccl_exec_timeout(tmp_path: Path) -> None:
    t0 = time.monotonic()
    run, script = _mismatch(tmp_path, "stuck", HCCL_EXEC_TIMEOUT="2")
    assert time.monotonic() - t0 < 60
    assert run.returncode == 1
    line = _line(script, 'case == "stuck"') + 3
    first = _line(script, "dist.all_reduce(t)  # everyone")
    assert _error(run, 0) == [
        "npu_runtime.hccl.signature.CollectiveTimeoutError: HCCL collective allreduce #2 on group "
        "default_group (ranks 0-1) timed out after 2 s (HCCL_EXEC_TIMEOUT): rank(s) 1 never entered it",
        f"  rank 0: waiting in allreduce at mismatch.py:{line}, float32 [4, 4], op sum",
        f"  rank 1: not entered; its last call was #1: allreduce at mismatch.py:{first}, float32 [4, 4], op sum",
    ]
    # the sleeping rank was stopped by the launcher, not left running
    assert (
        run.stderr.splitlines()[-1] == "ascend-lens: rank 0 failed (exit code 1); stopped rank(s) 1"
    )


@pytest.mark.usefixtures("no_leftovers")
def test_a_send_nobody_receives_is_reported(tmp_path: Path) -> None:
    run, script = _mismatch(tmp_path, "recv")
    assert run.returncode == 1
    first = _line(script, "dist.all_reduce(t)  # everyone")
    send = _line(script, "dist.send(t, dst=1)")
    assert _error(run, 0) == [
        "npu_runtime.hccl.signature.CollectiveTimeoutError: HCCL send #1 on group default_group "
        "(ranks 0-1): rank 1 exited without the matching receive (process finished; last call: "
        f"allreduce #1 on group default_group (ranks 0-1) at mismatch.py:{first})",
        f"  rank 0: send at mismatch.py:{send}, float32 [4, 4]",
    ]


def _rank_table(path: Path, devices: list[int], server: str = "10.0.0.1") -> Path:
    table = {
        "version": "1.0",
        "server_count": "1",
        "status": "completed",
        "server_list": [
            {
                "server_id": server,
                "device": [
                    {"device_id": str(d), "device_ip": f"192.168.100.{101 + i}", "rank_id": str(i)}
                    for i, d in enumerate(devices)
                ],
            }
        ],
    }
    path.write_text(json.dumps(table))
    return path


@pytest.mark.usefixtures("no_leftovers")
def test_a_rank_table_that_disagrees_with_the_launch_stops_init_process_group(
    tmp_path: Path,
) -> None:
    table = _rank_table(tmp_path / "rank_table.json", [0, 2, 1, 3])
    run, _ = _mismatch(tmp_path, "none", RANK_TABLE_FILE=str(table))
    assert run.returncode == 1
    head = "npu_runtime.hccl.communicator.HcclInitError: HCCL communicator initialisation failed (EI0001):"
    r0 = run.lines(0, "stderr")
    r1 = run.lines(1, "stderr")
    i0, i1 = r0.index(head), r1.index(head)
    assert r0[i0 + 1 : i0 + 3] == [
        f"  RANK_TABLE_FILE {table}: the rank table lists 4 ranks but the job has WORLD_SIZE=2",
        f"  RANK_TABLE_FILE {table}: the rank table puts 4 ranks on server 10.0.0.1, but 2 were "
        "started there (LOCAL_WORLD_SIZE)",
    ]
    assert (
        f"  RANK_TABLE_FILE {table}: the rank table gives rank 1 device_id 2 on server 10.0.0.1, "
        "but this process runs on device 1"
    ) in r1[i1 + 1 :]


def test_a_rank_table_that_fits_the_launch_places_the_ranks(tmp_path: Path) -> None:
    table = _rank_table(tmp_path / "rank_table.json", [0, 1])
    script = script_copy("allreduce_layout.py", tmp_path)
    run = ascend_lens(
        "--nproc", "2", script, cwd=tmp_path, env=clean_env(RANK_TABLE_FILE=str(table))
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.lines(0)[0].startswith("rank 0 sum ok algorithm mesh links HCCS=")


@pytest.mark.usefixtures("no_leftovers")
def test_wrong_hccl_variables_stop_init_and_typos_are_warned_about(tmp_path: Path) -> None:
    run, _ = _mismatch(
        tmp_path, "none", HCCL_BUFFSIZE="0", HCCL_ALGO="level0:ring;level1:H-D_R",
        HCCL_EXEC_TIMEOUT="soon", HCCL_BUFFER_SIZE="300",
    )  # fmt: skip
    assert run.returncode == 1
    lines = run.lines(0, "stderr")
    assert (
        "ascend-lens: warning: HCCL_BUFFER_SIZE is not an HCCL variable (HCCL ignores it); "
        "did you mean HCCL_BUFFSIZE?"
    ) in lines
    i = lines.index(
        "npu_runtime.hccl.communicator.HcclInitError: HCCL communicator initialisation failed (EI0001):"
    )
    assert lines[i + 1 : i + 4] == [
        "  HCCL_ALGO='level0:ring;level1:H-D_R' is invalid: level0 (inside a server) accepts only NA, not 'ring'",
        "  HCCL_BUFFSIZE='0' is out of range: >= 1 (MB) is allowed",
        "  HCCL_EXEC_TIMEOUT='soon' is invalid: an integer is required",
    ]


def test_killing_the_launcher_takes_every_rank_with_it(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    from hccl_support import processes_running

    script = tmp_path / "wait_forever.py"
    script.write_text("import time\nprint('ready', flush=True)\ntime.sleep(600)\n")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ascend_lens", "run", "--no-summary", "--nproc", "2", str(script)],
        env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert launcher.stdout is not None
    ready = {launcher.stdout.readline().strip() for _ in range(2)}
    assert ready == {"[rank0]: ready", "[rank1]: ready"}
    os.kill(launcher.pid, signal.SIGKILL)  # no chance to clean up
    launcher.wait()
    deadline = time.monotonic() + 10
    while processes_running(str(script)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(str(script)) == []
