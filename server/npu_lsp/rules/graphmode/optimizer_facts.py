"""What MindSpore 2.10's built-in optimizers do, measured into ms_optimizer_state.json."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_lsp.scope import ClassInfo


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


#: the method of `nn.Optimizer` that gives the learning rate to `construct`
GET_LR = "get_lr"


def inherits_optimizer_method(class_name: str, method: str, classes: Mapping[str, ClassInfo]) -> bool:
    """Does the file's class `class_name` derive from `mindspore.nn.Optimizer` (or one of
    its built-in subclasses, `nn.Adam`...) with no class of the file on the way defining
    `method` again? Then `self.<method>()` runs MindSpore's own (`self.get_lr()`).
    `classes` is the file's `ModuleInfo.classes` (by class name)."""
    builtin = optimizer_facts()
    seen: set[str] = set()
    todo = [class_name]
    while todo:
        c = classes.get(todo.pop())
        if c is None or c.name in seen:
            continue
        seen.add(c.name)
        if method in c.methods:
            return False
        for base in c.bases:
            last = base.rsplit(".", 1)[-1]
            if base.startswith("mindspore.") and (last == "Optimizer" or last in builtin):
                return True
            todo.append(last)
    return False
