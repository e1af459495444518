import numpy as np

import npu_runtime as npu

small = npu.Tensor(np.arange(6, dtype=np.float16).reshape(2, 3))
big = npu.Tensor(np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000))
total = small + small
ready = True  # @inspect
