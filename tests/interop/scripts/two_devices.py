"""The same small block on devices 0 and 1, two iterations, each ended by a device sync."""

import acl
import numpy as np

from npu_runtime import Tensor

assert acl.init() == 0
for _ in range(2):
    for device in (0, 1):
        assert acl.rt.set_device(device) == 0
        a = Tensor(np.ones((256, 256)), dtype="float16")
        _ = (a @ a) + a
        assert acl.rt.synchronize_device() == 0
