"""What compiled code gets back from Tensor attributes, methods and `mindspore.ops` calls
(`ms_result_kinds.json`): Python values fixed while compiling, host values, tuples; any
other `mindspore.ops` function gives a tensor."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

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

_NUMPY: dict[str, Any] = json.loads(
    Path(__file__).with_name("numpy_scalar_results.json").read_text(encoding="utf-8")
)
#: numpy ufuncs: on scalar inputs they give a numpy scalar, which graphs treat as a number
NUMPY_UFUNCS = frozenset(_NUMPY["ufuncs"])
#: numpy reductions giving a numpy scalar over a whole array (`np.sum(a)`, no axis)
NUMPY_REDUCTIONS = frozenset(_NUMPY["reductions"])
#: numpy.random functions: where `size` sits (-1: positional dimensions, -2: always an array)
_RANDOM_SIZE: dict[str, int] = _NUMPY["random_size"]


def numpy_random_array(name: str, call: ast.Call) -> bool:
    """Does `numpy.random.<name>(...)` give an ndarray (a size or dimensions are given), not a
    numpy scalar? `np.random.randn(4, 3)` and `np.random.uniform(0, 1, size=(4, 3))` are
    arrays, `np.random.randn()` and `np.random.randint(1, 5)` scalars."""
    where = _RANDOM_SIZE.get(name)
    if where is None:
        return False
    if where == -2:
        return True
    if where == -1:
        return bool(call.args)
    size = next((k.value for k in call.keywords if k.arg == "size"), None)
    if size is None and len(call.args) > where:
        size = call.args[where]
    return size is not None and not (isinstance(size, ast.Constant) and size.value is None)


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
