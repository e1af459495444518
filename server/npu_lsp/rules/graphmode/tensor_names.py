"""MindSpore's tensor class and its factory, one table for every rule.

Other spellings of the class (`mindspore.common.Tensor`, `mindspore.common.tensor.Tensor`)
never reach a rule: `scope.qualname` resolves them to `mindspore.Tensor` (npu_lsp.reexports).
`mindspore.tensor` is the factory function: it makes a tensor as the constructor does but is
no class, so `isinstance` tests use the first set only.
"""

from __future__ import annotations

from typing import Final

#: the class
TENSOR_CLASS: Final = frozenset({"mindspore.Tensor"})
#: what makes a tensor from data: the class and the factory
TENSOR_MAKERS: Final = TENSOR_CLASS | {"mindspore.tensor"}
