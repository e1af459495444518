"""The npu device's random number generators: one CPU torch.Generator per device.

Random ops on npu tensors draw from these (torch.npu.manual_seed / get_rng_state act on
them), so seeding the NPU does not disturb the CPU's stream and vice versa.
"""

from __future__ import annotations

import torch

_gens: dict[int, torch.Generator] = {}
DEFAULT_SEED = 67280421310721  # torch's default seed


def generator(index: int) -> torch.Generator:
    g = _gens.get(index)
    if g is None:
        g = _gens[index] = torch.Generator()
        g.manual_seed(DEFAULT_SEED)
    return g
