"""What MindSpore 2.10's built-in optimizers do, measured into ms_optimizer_state.json."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class OptimizerFacts:
    #: `<prefix>.<parameter name>`: the state the optimizer clones from the parameters
    clone_prefixes: frozenset[str]
    #: the single Parameters it creates (`global_step`, `beta1_power`, ...)
    names: frozenset[str]
    #: compiled with a Python list of gradients: "fails", "compiles", or None if not measured
    list_of_gradients: str | None


@functools.cache
def optimizer_facts() -> dict[str, OptimizerFacts]:
    """Per built-in optimizer of mindspore.nn (by class name), what was measured."""
    text = resources.files(__package__).joinpath("ms_optimizer_state.json").read_text("utf-8")
    return {
        name: OptimizerFacts(
            frozenset(entry["clone_prefixes"]),
            frozenset(entry["names"]),
            entry.get("list_of_gradients"),
        )
        for name, entry in json.loads(text)["optimizers"].items()
    }


@functools.cache
def optimizer_mappers() -> dict[str, str]:
    """`self.<attr>` -> mapper class ("HyperMap" / "Map") that `nn.Optimizer.__init__` binds."""
    text = resources.files(__package__).joinpath("ms_optimizer_state.json").read_text("utf-8")
    mappers: dict[str, str] = json.loads(text)["base_mappers"]
    return mappers
