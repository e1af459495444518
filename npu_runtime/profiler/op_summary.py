"""Write msprof's per-kernel table, `op_summary_<timestamp>.csv`, from work records.

Column semantics follow msprof's op_summary assembler (../shared/reference/acl/profiling.md
§2): the start time is a string with a trailing TAB, the wait time is the device-wide gap
to the previous task, and values we do not model are `N/A`, as msprof writes them.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from functools import lru_cache

from npu_runtime.profiler.data_files import op_summary_columns, trace_constants
from npu_runtime.profiler.timefmt import ts_string
from npu_runtime.records import TensorInfo, WorkRecord

NA = "N/A"
DEFAULT_FREQ_MHZ = 1800.0  # 910B cube clock; cycles = µs · MHz


@lru_cache(maxsize=4096)
def _tensors(infos: tuple[TensorInfo, ...]) -> tuple[str, str, str]:
    # Cached: a run launches the same few shapes over and over.
    if not infos:
        return "", "", ""
    # msprof wraps shapes in literal quotes so spreadsheets keep "64,128" as text.
    shapes = '"' + ";".join(",".join(map(str, t.shape)) for t in infos) + '"'
    return shapes, ";".join(t.dtype for t in infos), ";".join(t.format for t in infos)


def start_string(epoch_us: int, start_us: float) -> str:
    """msprof's `Task Start Time(us)` cell: 3 decimals and a trailing TAB (an Excel guard)."""
    return ts_string(epoch_us, start_us) + "\t"


def _ratio(part: float, whole: float) -> str:
    return f"{part / whole:.3f}" if whole > 0 else "0"


def _pmu(rec: WorkRecord, freq_mhz: float) -> tuple[str, ...]:
    """PipeUtilization columns (aicore_time .. cube_utilization) from the cost model's split."""
    tb = rec.time_by_unit
    return _pmu_cells(
        rec.unit,
        rec.duration_us,
        tb.get("cube", 0.0),
        tb.get("vector", 0.0),
        tb.get("scalar", 0.0),
        tb.get("memory", 0.0),
        freq_mhz,
    )


@lru_cache(maxsize=4096)
def _pmu_cells(
    unit: str, dur: float, cube: float, vec: float, scalar: float, mem: float, freq_mhz: float
) -> tuple[str, ...]:
    # Cached: a loop relaunches the same op at the same cost, and formatting 25 cells per
    # row is most of the CSV's writing time.
    n_cols = 25
    if unit not in ("AI_CORE", "AI_VECTOR_CORE"):
        return (NA,) * n_cols
    on_aic = unit == "AI_CORE"
    aic_t = dur if on_aic else 0.0
    aiv_t = dur if not on_aic else vec
    aic = [
        f"{aic_t:.3f}",
        str(round(aic_t * freq_mhz)),
        f"{cube:.3f}",
        _ratio(cube, aic_t),
        f"{scalar if on_aic else 0.0:.3f}",
        _ratio(scalar if on_aic else 0.0, aic_t),
        NA,  # mte1 (L1 -> L0) is not modelled
        NA,
        f"{mem if on_aic else 0.0:.3f}",
        _ratio(mem if on_aic else 0.0, aic_t),
        NA,  # fixpipe is not modelled
        NA,
        NA,  # icache miss rate
    ]
    aiv = [
        f"{aiv_t:.3f}",
        str(round(aiv_t * freq_mhz)),
        f"{vec:.3f}",
        _ratio(vec, aiv_t),
        f"{scalar if not on_aic else 0.0:.3f}",
        _ratio(scalar if not on_aic else 0.0, aiv_t),
        f"{mem if not on_aic else 0.0:.3f}",
        _ratio(mem if not on_aic else 0.0, aiv_t),
        NA,  # mte3 (UB -> GM) is not split out of memory time
        NA,
        NA,
    ]
    cube_util = f"{cube / dur * 100:.3f}" if dur > 0 else "0"
    return (*aic, *aiv, cube_util)


def ordered_ops(records: Iterable[WorkRecord]) -> list[WorkRecord]:
    """The ops among `records` in op_summary row order: by device, then start, then task id."""
    return sorted(
        (r for r in records if r.kind == "op"), key=lambda r: (r.device, r.start_us, r.task_id)
    )


def rows(
    records: Iterable[WorkRecord],
    *,
    epoch_us: int = 0,
    pmu: bool = True,
    freq_mhz: float = DEFAULT_FREQ_MHZ,
) -> list[list[str]]:
    """op_summary rows for the ops among `records` (copies and memsets are not kernels)."""
    model_none = str(trace_constants()["model_id_none"])
    ops = ordered_ops(records)
    out: list[list[str]] = []
    prev: WorkRecord | None = None
    for rec in ops:
        if prev is None or prev.device != rec.device:
            wait = "0"
        else:
            # msprof: max(0, start - previous start - previous duration), std::to_string.
            wait = f"{max(0.0, rec.start_us - prev.start_us - prev.duration_us):.6f}"
        prev = rec
        row = [
            str(rec.device),
            model_none if rec.model_id is None else str(rec.model_id),
            str(rec.task_id),
            str(rec.stream),
            rec.name,
            rec.op_type,
            "static",  # the emulator knows every shape before launch
            rec.unit,
            start_string(epoch_us, rec.start_us),
            f"{rec.duration_us:.3f}",
            wait,
            str(rec.block_dim),
            "0",  # Mix Block Num: no op here runs on both core types
            "NO",  # HF32 Eligible
            *_tensors(rec.inputs),
            *_tensors(rec.outputs),
            NA,  # Context ID: no subtasks
        ]
        if pmu:
            row += _pmu(rec, freq_mhz)
        out.append(row)
    return out


def write(
    records: Iterable[WorkRecord],
    path: str | os.PathLike[str],
    *,
    epoch_us: int = 0,
    pmu: bool = True,
    freq_mhz: float = DEFAULT_FREQ_MHZ,
) -> None:
    """Write `path` as msprof's op_summary CSV (header exactly as msprof's)."""
    header = op_summary_columns(pmu)
    body = rows(records, epoch_us=epoch_us, pmu=pmu, freq_mhz=freq_mhz)
    with open(path, "w", newline="", encoding="utf-8") as f:
        # The header is written verbatim: csv would quote nothing in it anyway, but
        # msprof's byte-exact spelling is the contract.
        f.write(",".join(header) + "\n")
        csv.writer(f, lineterminator="\n").writerows(body)
