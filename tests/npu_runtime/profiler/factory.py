"""Build WorkRecords the way the runtime does, for exporter tests that need exact inputs."""

from __future__ import annotations

from typing import Any

from npu_runtime.records import SourceSite, TensorInfo, WorkRecord


class Clock:
    """Per-stream simulated clocks and a per-device task counter, like the runtime's."""

    def __init__(self) -> None:
        self.now: dict[tuple[int, int], float] = {}
        self.task = 0

    def op(
        self,
        op_type: str,
        duration: float,
        *,
        site: tuple[str, int] | None = None,
        stream: int = 0,
        device: int = 0,
        kind: str = "op",
        gap: float = 0.0,
        **extra: Any,
    ) -> WorkRecord:
        start = self.now.get((device, stream), 0.0) + gap
        self.now[(device, stream)] = start + duration
        self.task += 1
        fields: dict[str, Any] = {
            "bound": "cube" if op_type == "MatMul" else "memory",
            "unit": "AI_CORE" if op_type == "MatMul" else "AI_VECTOR_CORE",
            "inputs": (TensorInfo((64, 128), "FLOAT16"), TensorInfo((128, 256), "FLOAT16")),
            "outputs": (TensorInfo((64, 256), "FLOAT16"),),
        }
        fields.update(extra)
        return WorkRecord(
            kind=kind,  # type: ignore[arg-type]
            name=f"{op_type}_{self.task}",
            op_type=op_type,
            device=device,
            stream=stream,
            task_id=self.task,
            start_us=start,
            duration_us=duration,
            site=SourceSite(*site) if site else None,
            **fields,
        )
