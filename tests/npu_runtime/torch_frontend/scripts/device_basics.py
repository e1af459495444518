"""Device `npu` basics a torch_npu script relies on; prints one line per check."""

import io
import sys

import torch
import torch_npu  # noqa: F401 (registers the npu device)

x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
a = x.npu()
print("device", a.device, a.is_npu, x.to("npu:1").device, torch.device("npu:0"))
print("repr", a)
print(
    "cpu", a.cpu().tolist(), (a * 2).numpy().tolist() if False else (a * 2).cpu().numpy().tolist()
)
b = torch.randn(3, 4, device="npu")
print("factory", b.device, b.shape, torch.zeros(2, device="npu").cpu().tolist())
c = a.clone()
c.add_(1).mul_(2)
print("inplace", c.cpu().tolist(), a.cpu().tolist())
v = a.t()
print("view", v.shape, v.stride(), v.is_contiguous(), v.contiguous().view(-1).cpu().tolist())
m = torch.nn.Linear(3, 2).npu()
print("module", next(m.parameters()).device)
with torch.no_grad():
    y = m(a)
print("no_grad", y.requires_grad, y.shape)
w = torch.ones(3, requires_grad=True, device="npu")
(a * w).sum().backward()
print("grad", w.grad.cpu().tolist())
buf = io.BytesIO()
torch.save({"a": a, "m": m.state_dict()}, buf)
buf.seek(0)
on_cpu = torch.load(buf, map_location="cpu")
buf.seek(0)
on_npu = torch.load(buf, map_location="npu:0")
print(
    "save",
    on_cpu["a"].device,
    on_npu["a"].device,
    torch.equal(on_cpu["a"], x),
    torch.equal(on_npu["a"].cpu(), x),
)
torch.set_default_device("npu")
d = torch.ones(2)
torch.set_default_device("cpu")
print("default_device", d.device)
print(
    "api",
    torch.npu.is_available(),
    torch.npu.device_count(),
    torch.npu.current_device(),
    torch.npu.get_device_name(0),
)
torch.npu.set_device("npu:1")
print("set_device", torch.npu.current_device(), torch.ones(1, device="npu").device)
torch.npu.set_device(0)
torch.npu.manual_seed(7)
r1 = torch.rand(3, device="npu").cpu()
state = torch.npu.get_rng_state()
r2 = torch.rand(3, device="npu").cpu()
torch.npu.set_rng_state(state)
r3 = torch.rand(3, device="npu").cpu()
torch.npu.manual_seed(7)
print(
    "rng",
    torch.equal(r1, torch.rand(3, device="npu").cpu()),
    torch.equal(r2, r3),
    not torch.equal(r1, r2),
)
print(
    "props",
    torch.npu.get_device_properties(0).name,
    torch.npu.get_device_properties(0).total_memory,
)
sys.stdout.flush()
