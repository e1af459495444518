import numpy as np

import npu_runtime as npu

a = npu.Tensor(np.ones((4, 4), np.float16))
b = a @ a  # @launch
result = b.numpy()  # @sync
print("never reached")
