"""A small MLP block, pyACL-era style: one aclrtSynchronizeDevice per iteration marks the step.

MODEL_DTYPE picks float16 (default) or float32, so two runs can be compared. Shapes mix
small ops (which cannot fill the 910B's cores: block-dim findings) with one large MatMul.
"""

import os

import acl
import numpy as np

from npu_runtime import Tensor
from npu_runtime import tensor as T

STEPS = 3
dtype = os.environ.get("MODEL_DTYPE", "float16")
rng = np.random.default_rng(0)
w = Tensor(rng.standard_normal((128, 256)) * 0.1, dtype=dtype)
bias = Tensor(rng.standard_normal((64, 256)) * 0.1, dtype=dtype)
big = Tensor(rng.standard_normal((2048, 2048)) * 0.02, dtype=dtype)
for _ in range(STEPS):
    x = Tensor(rng.standard_normal((64, 128)), dtype=dtype)
    y = T.softmax(x @ w + bias)
    z = big @ big
    assert acl.rt.synchronize_device() == 0
print("done", y.shape, z.shape)
