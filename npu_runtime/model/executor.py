"""Run a compiled ONNX graph on the host: onnxruntime (CPU), or ONNX's reference evaluator
where onnxruntime is not installed. The values are what the emulated device computes; the
device's clock and profile come from the cost model, not from this run's wall time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


class Executor:
    """One loaded graph; `run(feeds)` returns the outputs named at construction, in order."""

    def __init__(self, graph: bytes, outputs: Sequence[str]) -> None:
        self.outputs = list(outputs)
        self._session: Any = None
        self._reference: Any = None
        try:
            import onnxruntime as ort
        except ImportError:
            ort = None
        if ort is not None:
            so = ort.SessionOptions()
            so.log_severity_level = 3  # warnings about unused initializers are noise here
            # Workers that spin after a run steal the CPU from the script's own Python (and
            # from the records this run still has to place); park them instead.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(
                graph, sess_options=so, providers=["CPUExecutionProvider"]
            )
            self.backend = "onnxruntime"
        else:
            from onnx.reference import ReferenceEvaluator

            self._reference = ReferenceEvaluator(graph)
            self.backend = "onnx.reference"

    def run(self, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        if self._session is not None:
            return list(self._session.run(self.outputs, dict(feeds)))
        return [np.asarray(v) for v in self._reference.run(self.outputs, dict(feeds))]
