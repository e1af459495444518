#!/usr/bin/env python3
"""Derive the names of the Parameters that MindSpore 2.10's parameter-owning `mindspore.nn`
layers create, and write them to server/npu_lsp/rules/graphmode/ms_layer_parameters.json.

A layer that no Cell holds keeps these bare names, so two of them reached by one graph clash
("its name 'weight' already exists", MS154). Only the names a layer has under every
constructor variant tried here are kept (`Dense(has_bias=False)` has no `bias`), and only their
first dotted part (`BatchNorm3d`'s `bn2d.gamma` is `bn2d`), which is what a clash needs.
`possible` lists every name some variant creates: layers whose possible names are disjoint
(`LayerNorm`'s gamma / beta, `Dense`'s weight / bias) can never clash (MS126).
Run with the MindSpore interpreter: `~/.cache/ms210/bin/python
tests/npu_lsp/difftest/derive_layer_parameters.py` (never in CI).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import mindspore
from mindspore import nn

OUT = (
    Path(__file__).resolve().parents[3] / "server/npu_lsp/rules/graphmode/ms_layer_parameters.json"
)

# each layer with the constructor variants that may drop a Parameter
VARIANTS: dict[str, list[Callable[[], nn.Cell]]] = {
    "Dense": [lambda: nn.Dense(3, 4), lambda: nn.Dense(3, 4, has_bias=False)],
    "BiDense": [lambda: nn.BiDense(3, 3, 4), lambda: nn.BiDense(3, 3, 4, has_bias=False)],
    **{
        name: [
            lambda name=name: getattr(nn, name)(3, 4, 3),
            lambda name=name: getattr(nn, name)(3, 4, 3, has_bias=True),
        ]
        for name in (
            "Conv1d",
            "Conv2d",
            "Conv3d",
            "Conv1dTranspose",
            "Conv2dTranspose",
            "Conv3dTranspose",
        )
    },
    "Embedding": [lambda: nn.Embedding(10, 4)],
    "EmbeddingLookup": [lambda: nn.EmbeddingLookup(10, 4)],
    **{
        name: [
            lambda name=name: getattr(nn, name)(4),
            lambda name=name: getattr(nn, name)(4, affine=False),
            lambda name=name: getattr(nn, name)(4, use_batch_statistics=True),
        ]
        for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")
    },
    **{
        name: [
            lambda name=name: getattr(nn, name)(4),
            lambda name=name: getattr(nn, name)(4, affine=False),
        ]
        for name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")
    },
    "LayerNorm": [lambda: nn.LayerNorm((4,))],
    "GroupNorm": [lambda: nn.GroupNorm(2, 4), lambda: nn.GroupNorm(2, 4, affine=False)],
    "PReLU": [lambda: nn.PReLU()],
    **{
        name: [
            lambda name=name: getattr(nn, name)(3, 4),
            lambda name=name: getattr(nn, name)(3, 4, has_bias=False),
            lambda name=name: getattr(nn, name)(3, 4, num_layers=2, bidirectional=True),
        ]
        for name in ("LSTM", "GRU", "RNN")
    },
    **{
        name: [
            lambda name=name: getattr(nn, name)(3, 4),
            lambda name=name: getattr(nn, name)(3, 4, has_bias=False),
        ]
        for name in ("LSTMCell", "GRUCell", "RNNCell")
    },
}


def _names(make: Callable[[], nn.Cell]) -> list[str]:
    return [p.name.split(".", 1)[0] for p in make().get_parameters()]


def main() -> None:
    table: dict[str, list[str]] = {}
    possible: dict[str, list[str]] = {}
    for layer, makers in VARIANTS.items():
        variants = [_names(m) for m in makers]
        always = set(variants[0]).intersection(*variants[1:])
        table[layer] = [n for n in dict.fromkeys(variants[0]) if n in always]
        possible[layer] = list(dict.fromkeys(n for names in variants for n in names))
    out = {
        "mindspore": mindspore.__version__,
        "layers": dict(sorted(table.items())),
        "possible": dict(sorted(possible.items())),
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(table)} layers -> {OUT}")


if __name__ == "__main__":
    main()
