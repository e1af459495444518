"""Autograd, training and generators on npu:N with N > 0 (the C++ device guard's job).

Prints one `key value` line per check for test_multi_device.py."""

import torch
import torch_npu  # noqa: F401

# backward on npu:1 equals backward on the CPU
torch.manual_seed(0)
xc = torch.randn(4, 4, requires_grad=True)
wc = torch.randn(4, 3, requires_grad=True)
xn = xc.detach().to("npu:1").requires_grad_()
wn = wc.detach().to("npu:1").requires_grad_()
(torch.tanh(xc @ wc) * 2).sum().backward()
(torch.tanh(xn @ wn) * 2).sum().backward()
assert xn.grad is not None and wn.grad is not None
print(
    "grad",
    xn.grad.device,
    wn.grad.device,
    torch.allclose(xn.grad.cpu(), xc.grad, atol=1e-6),
    torch.allclose(wn.grad.cpu(), wc.grad, atol=1e-6),
)


# the autograd engine's device thread runs backward with npu:3 as its current device
class Probe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        return x * 1

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        print("backward_current", torch.npu.current_device(), torch.zeros(1, device="npu").device)
        return g


t = torch.ones(2, device="npu:3", requires_grad=True)
Probe.apply(t).sum().backward()
print("main_current", torch.npu.current_device(), t.grad.device)

# torch.npu.set_device(2); model.npu(): one training step equals the CPU's
torch.npu.set_device(2)
torch.manual_seed(1)
ref = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
model.load_state_dict(ref.state_dict())
model.npu()
x, y = torch.randn(5, 8), torch.randn(5, 2)
for m, xs, ys in ((ref, x, y), (model, x.npu(), y.npu())):
    opt = torch.optim.SGD(m.parameters(), lr=0.5, momentum=0.9)
    opt.zero_grad()
    torch.nn.functional.mse_loss(m(xs), ys).backward()
    opt.step()
same = all(
    torch.allclose(a.detach().cpu(), b.detach(), atol=1e-6)
    for a, b in zip(model.parameters(), ref.parameters(), strict=True)
)
print(
    "train",
    {str(p.device) for p in model.parameters()},
    {str(p.grad.device) for p in model.parameters()},
    same,
)

# torch.Generator(device="npu"): seeded like a CPU generator, state round trip
g = torch.Generator(device="npu:1").manual_seed(7)
a = torch.randn(3, generator=g, device="npu:1")
b = torch.rand(3, generator=g, device="npu:1")
c = torch.Generator().manual_seed(7)
print(
    "generator",
    g.device,
    torch.Generator(device="npu").device,
    a.device,
    torch.equal(a.cpu(), torch.randn(3, generator=c)),
    torch.equal(b.cpu(), torch.rand(3, generator=c)),
)
state = g.get_state()
u = torch.rand(4, generator=g, device="npu:1")
g.set_state(state)
print("replay", torch.equal(u.cpu(), torch.rand(4, generator=g, device="npu:1").cpu()))
try:
    torch.Generator(device="npu:8")
except RuntimeError as exc:
    print("bad_generator", str(exc).splitlines()[0])
