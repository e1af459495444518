import numpy as np

import npu_runtime as npu

a = npu.Tensor(np.array([300.0, 2.0]), dtype="float16")
b = a * a  # @mul
raise SystemExit(3)  # @fail
