"""Dtypes the real NPU refuses: each case fails at its own line (argv[1] picks the case)."""

import os
import sys

import torch
import torch_npu  # noqa: F401  (registers the npu device)

case = sys.argv[1]
print("pid", os.getpid(), flush=True)
if case == "mm_int64":
    a = torch.ones(2, 3, dtype=torch.int64, device="npu")
    y = a @ torch.ones(3, 2, dtype=torch.int64, device="npu")
elif case == "bmm_double":
    d = torch.ones(2, 3, 4, dtype=torch.float64, device="npu")
    y = torch.bmm(d, d.transpose(1, 2))
elif case == "linear_complex":
    lin = torch.nn.Linear(4, 2, bias=False).npu()
    y = lin(torch.ones(3, 4, device="npu").to(torch.complex64))
elif case == "linear_double":
    lin = torch.nn.Linear(4, 2).double().npu()
    y = lin(torch.ones(3, 4, dtype=torch.float64, device="npu"))
elif case == "mm_bf16":
    h = torch.ones(2, 2, dtype=torch.bfloat16, device="npu")
    y = torch.mm(h, h)
elif case == "adds_uint64":
    u = torch.zeros(3, dtype=torch.uint64, device="npu")
    u = u + 1
elif case == "add_uint32":
    u = torch.zeros(3, dtype=torch.uint32, device="npu")
    u.add_(u)
elif case == "randint_uint64":
    r = torch.randint(0, 100, (1,), dtype=torch.uint64, device="npu")
elif case == "randn_complex":
    z = torch.randn(4, dtype=torch.complex64, device="npu")
elif case == "supported":
    # float64, int64 and complex work where the op's aclnn API lists them
    d = torch.arange(4, dtype=torch.float64, device="npu")
    i = torch.arange(4, device="npu")
    c = torch.zeros(2, dtype=torch.complex64, device="npu")
    print(
        "ok",
        (d + 1).tolist(),
        (i + i).tolist(),
        (c + c).dtype,
        torch.randn(2, dtype=torch.float64, device="npu").dtype,
    )
    sys.exit(0)
print("not reached")
