"""`npu_runtime.dump(out_dir, level)`: msprobe-compatible precision dumps of every op.

    with npu_runtime.dump("dump", level="statistics") as d:
        for batch in data:
            train_step(batch)
            d.step()

writes, per step and per device (rank), what msprobe's PrecisionDebugger writes at level L1
for a PyTorch job, so `msprobe compare` reads it:

    out_dir/step<k>/rank<device>/
    ├── dump.json          {"task", "level": "L1", "framework": "pytorch", "dump_data_dir",
    │                       "data": {"Torch.matmul.0.forward": {"input_args": [...],
    │                                "input_kwargs": {...}, "output": [...]}, ...}}
    ├── stack.json         the launching source line of each entry
    ├── construct.json     {} (no module structure at L1)
    └── dump_tensor_data/  level "tensor" only: <entry>.input.<i>.pt / .output.<i>.pt

Entries are named `<Prefix>.<api>.<call#>.forward` with the call number counted per API,
step and rank (msprobe's numbering); the API for each op type is a table
(npu_runtime/dump/data/api_names.json).
"""

from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from npu_runtime import numerics, steps
from npu_runtime.dump import torch_file
from npu_runtime.dump.names import api_name
from npu_runtime.dump.stats import scalar_entry, tensor_entry
from npu_runtime.records import WorkRecord

LEVELS = ("statistics", "tensor")
TENSOR_DIR = "dump_tensor_data"


@dataclass
class _Pending:
    """An op captured inside its kernel, waiting for its WorkRecord (rank, launch site)."""

    op_type: str
    inputs: list[dict[str, Any]]  # dump.json entries, statistics computed at capture
    outputs: list[dict[str, Any]]
    kwargs: dict[str, Any]
    # Tensor level: copies of the input and output values, written once the name is known.
    arrays: tuple[list[np.ndarray], list[np.ndarray]] | None = None


@dataclass
class _RankDump:
    """What one step of one rank has dumped so far."""

    data: dict[str, Any] = field(default_factory=dict)
    stack: dict[str, Any] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))


class Dumper:
    """A dump session: collects while active; `step()` and `stop()` write the step's files."""

    def __init__(self, out_dir: str | os.PathLike[str], level: str = "statistics") -> None:
        if level not in LEVELS:
            raise ValueError(f"dump level {level!r}: expected one of {', '.join(LEVELS)}")
        # Absolute now: the dumped code may chdir before anything is written.
        self.out_dir = Path(out_dir).absolute()
        self.level = level
        self.step_no = 0
        self.files: list[Path] = []
        self._ranks: dict[int, _RankDump] = {}
        self._tls = threading.local()
        self._lock = threading.Lock()
        self._attached = False
        # hooks removes listeners by equality; keep the bound methods we registered.
        self._tensor_listener = self._on_tensors
        self._work_listener = self._on_work

    # Listeners (run inside every launch) ---------------------------------------------
    def _on_tensors(
        self,
        op_type: str,
        inputs: list[np.ndarray],
        outputs: list[np.ndarray],
        attrs: Mapping[str, Any],
    ) -> None:
        # The arrays are views of device memory that later work may overwrite: summarise
        # them now, and copy them only when the tensors themselves are wanted.
        din, dout = numerics.declared.get() or ([], [])

        def entries(arrays: list[np.ndarray], declared: list[np.dtype]) -> list[dict[str, Any]]:
            return [
                tensor_entry(a, None, declared[i] if i < len(declared) else None)
                for i, a in enumerate(arrays)
            ]

        kwargs = {k: e for k, v in attrs.items() if (e := scalar_entry(v)) is not None}
        copies = (
            ([np.array(a) for a in inputs], [np.array(a) for a in outputs])
            if self.level == "tensor"
            else None
        )
        self._tls.pending = _Pending(
            op_type, entries(inputs, din), entries(outputs, dout), kwargs, copies
        )

    def _on_work(self, rec: WorkRecord) -> None:
        pending: _Pending | None = getattr(self._tls, "pending", None)
        self._tls.pending = None
        if pending is None or rec.kind != "op" or pending.op_type != rec.op_type:
            return  # a copy, a memset, or an op whose kernel never ran (injected fault)
        with self._lock:
            self._add(rec, pending)

    def _add(self, rec: WorkRecord, p: _Pending) -> None:
        rank = self._ranks.setdefault(rec.device, _RankDump())
        api = api_name(p.op_type)
        name = f"{api}.{rank.calls[api]}.forward"
        rank.calls[api] += 1
        if p.arrays is not None:
            folder = self._rank_dir(rec.device) / TENSOR_DIR
            folder.mkdir(parents=True, exist_ok=True)
            for role, entries, arrays in (("input", p.inputs, p.arrays[0]),
                                          ("output", p.outputs, p.arrays[1])):  # fmt: skip
                for i, (entry, a) in enumerate(zip(entries, arrays, strict=True)):
                    entry["data_name"] = f"{name}.{role}.{i}.pt"
                    torch_file.save(a, folder / entry["data_name"])
        rank.data[name] = {"input_args": p.inputs, "input_kwargs": p.kwargs, "output": p.outputs}
        if rec.site is not None:
            where = f'File "{rec.site.file}", line {rec.site.line}, in {rec.site.function}'
            rank.stack[str(len(rank.stack))] = [[name], [where]]

    # Control ---------------------------------------------------------------------------
    def start(self) -> Dumper:
        """Start dumping (idempotent)."""
        if self._attached:
            return self
        if self.out_dir.exists() and not self.out_dir.is_dir():
            raise NotADirectoryError(f"dump output {self.out_dir} is not a directory")
        from npu_runtime.core import hooks

        hooks.add_tensor_listener(self._tensor_listener)
        hooks.add_work_listener(self._work_listener)
        steps.attach(self.step)
        self._attached = True
        return self

    def step(self) -> int:
        """Write the current step and start the next; returns the new step (from 0)."""
        with self._lock:
            self._flush()
            self.step_no += 1
            return self.step_no

    def stop(self) -> list[Path]:
        """Stop dumping and write the current step; returns every file written."""
        if self._attached:
            from npu_runtime.core import hooks

            hooks.remove_tensor_listener(self._tensor_listener)
            hooks.remove_work_listener(self._work_listener)
            steps.detach(self.step)
            self._attached = False
        with self._lock:
            self._flush()
        return self.files

    def _rank_dir(self, device: int) -> Path:
        return self.out_dir / f"step{self.step_no}" / f"rank{device}"

    def _flush(self) -> None:
        for device, rank in sorted(self._ranks.items()):
            d = self._rank_dir(device)
            d.mkdir(parents=True, exist_ok=True)
            tensor_dir = str(d / TENSOR_DIR) + os.sep if self.level == "tensor" else None
            doc = {
                "task": self.level,
                "level": "L1",
                "framework": "pytorch",
                "dump_data_dir": tensor_dir,
                "data": rank.data,
            }
            for name, content in (("dump.json", doc), ("stack.json", rank.stack),
                                  ("construct.json", {})):  # fmt: skip
                path = d / name
                path.write_text(json.dumps(content, indent=1) + "\n", encoding="utf-8")
                self.files.append(path)
        self._ranks = {}

    def __enter__(self) -> Dumper:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Write even when the block raised: the dump of a failing run is the one you need.
        self.stop()


def dump(out_dir: str | os.PathLike[str], level: str = "statistics") -> Dumper:
    """Dump every op's inputs and outputs in a `with` block, as msprobe does (see module doc).

    `level="statistics"` writes Max/Min/Mean/Norm only; `"tensor"` also writes each tensor
    as a `.pt` file. Raises ValueError for another level.
    """
    return Dumper(out_dir, level)
