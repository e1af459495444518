"""What compiled code gets back from Tensor attributes, methods and `mindspore.ops` calls
(`ms_result_kinds.json`): Python values fixed while compiling, host values, tuples; any
other `mindspore.ops` function gives a tensor."""

from __future__ import annotations

import json
from pathlib import Path

_DATA: dict[str, list[str]] = json.loads(
    Path(__file__).with_name("ms_result_kinds.json").read_text(encoding="utf-8")
)

#: Tensor attributes known while compiling under static shapes (`x.shape`, `x.ndim`...)
STATIC_ATTRS = frozenset(_DATA["static_tensor_attributes"])
#: Tensor methods giving a Python int while compiling (`x.dim()`, `x.numel()`)
CONST_METHODS = frozenset(_DATA["constant_tensor_methods"])
#: Tensor methods reading the device (`x.asnumpy()`, `x.item()`): run-time Python values
HOST_METHODS = frozenset(_DATA["host_tensor_methods"])
#: `mindspore.ops` functions giving a compile-time value (`ops.shape(x)`, `ops.rank(x)`)
CONST_FUNCTIONS = frozenset(_DATA["constant_ops_functions"])
#: Primitives whose output is a compile-time value (`P.Shape()(x)`)
CONST_PRIMITIVES = frozenset(_DATA["constant_primitives"])
#: functions and methods giving a tuple of tensors (`ops.split`, `x.topk(k)`)
TUPLE_RESULTS = frozenset(_DATA["tuple_results"])
#: other lowercase `mindspore.ops` functions that give no tensor (`ops.grad`, `ops.partial`)
NOT_TENSOR_FUNCTIONS = frozenset(_DATA["not_tensor_functions"])
#: `mindspore.ops` functions folded while compiling on constant tensors (`ops.stack(xs)` of
#: the tensors of a list given to the top-level `construct`)
FOLDING_FUNCTIONS = frozenset(_DATA["folding_ops_functions"])
#: functions giving a Python list of floats (`nn.cosine_decay_lr(...)`)
NUMBER_LIST_FUNCTIONS = frozenset(_DATA["number_list_functions"])

_NUMPY: dict[str, list[str]] = json.loads(
    Path(__file__).with_name("numpy_scalar_results.json").read_text(encoding="utf-8")
)
#: numpy ufuncs: on scalar inputs they give a numpy scalar, which graphs treat as a number
NUMPY_UFUNCS = frozenset(_NUMPY["ufuncs"])
#: numpy reductions giving a numpy scalar over a whole array (`np.sum(a)`, no axis)
NUMPY_REDUCTIONS = frozenset(_NUMPY["reductions"])


def gives_tensor(qualname: str) -> bool:
    """Does calling the `mindspore.ops` function `qualname` (dotted) give one tensor?"""
    if not qualname.startswith("mindspore.ops."):
        return False
    last = qualname.rpartition(".")[2]
    return (
        last[:1].islower()
        and last not in CONST_FUNCTIONS
        and last not in TUPLE_RESULTS
        and last not in NOT_TENSOR_FUNCTIONS
    )
