"""How code names MindSpore's tensor class and its factory, one table for every rule.

`mindspore.Tensor`, `mindspore.common.Tensor` and `mindspore.common.tensor.Tensor` (the class
through its defining module) are one object. `mindspore.tensor` is the factory function: it
makes a tensor as the constructor does but is no class, so `isinstance` tests use the first set
only.
"""

from __future__ import annotations

from typing import Final

#: the class, however it is imported
TENSOR_CLASS: Final = frozenset({"mindspore.Tensor", "mindspore.common.Tensor", "mindspore.common.tensor.Tensor"})
#: what makes a tensor from data: the class and the factory
TENSOR_MAKERS: Final = TENSOR_CLASS | {"mindspore.tensor"}
