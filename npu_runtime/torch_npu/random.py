"""The npu device's random number generators: one CPU torch.Generator per device.

Random ops on npu tensors draw from these (torch.npu.manual_seed / get_rng_state act on
them), so seeding the NPU does not disturb the CPU's stream and vice versa.
"""

from __future__ import annotations

import threading

import torch

_scratch = threading.local()
_gens: dict[int, torch.Generator] = {}
DEFAULT_SEED = 67280421310721  # torch's default seed


def generator(index: int) -> torch.Generator:
    g = _gens.get(index)
    if g is None:
        g = _gens[index] = torch.Generator()
        g.manual_seed(DEFAULT_SEED)
    return g


def borrow(npu_gen: torch.Generator) -> torch.Generator:
    """A CPU generator holding `npu_gen`'s state (an npu generator is an mt19937 generator
    that names the npu device); the caller hands the state back after the op."""
    g = getattr(_scratch, "gen", None)
    if g is None:
        g = _scratch.gen = torch.Generator()
    g.set_state(npu_gen.get_state())
    return g
