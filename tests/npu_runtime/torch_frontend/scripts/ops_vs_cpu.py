"""Common ops on npu against the same ops on the CPU: prints `name max_abs_diff` per case."""

import copy

import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

torch.manual_seed(0)
x = torch.randn(3, 4)
idx = torch.tensor([0, 2])


def cases(t, dev):
    q = t[None, None]
    return {
        "index": t[idx.to(dev)],
        "mask": t[t > 0],
        "setitem": t.clone().index_fill_(0, idx.to(dev), 5.0),
        "where": torch.where(t > 0, t, torch.zeros_like(t)),
        "softmax": torch.softmax(t, -1),
        "layer_norm": F.layer_norm(t, (4,)),
        "gelu": F.gelu(t),
        "sdpa_causal": F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "topk": t.topk(2).values,
        "sort": t.sort(descending=True).values,
        "cumsum": t.cumsum(0),
        "einsum": torch.einsum("ij,kj->ik", t, t),
        "interpolate": F.interpolate(t[None, None], scale_factor=2),
        "cross_entropy": F.cross_entropy(
            t, torch.tensor([0, 1, 2], device=dev), label_smoothing=0.1
        ),
        "std": t.std(dim=1),
    }


cpu, npu = cases(x, "cpu"), cases(x.npu(), "npu")
for name in cpu:
    print(name, (cpu[name] - npu[name].cpu()).abs().max().item())

for rnn in (torch.nn.LSTM(4, 5, num_layers=2), torch.nn.GRU(4, 5, num_layers=2)):
    rnn_npu = copy.deepcopy(rnn).npu()
    seq = torch.randn(6, 3, 4)
    out, _ = rnn(seq)
    out_npu, _ = rnn_npu(seq.npu())
    out.sum().backward()
    out_npu.sum().backward()
    grads = max(
        (a.grad - b.grad.cpu()).abs().max().item()
        for a, b in zip(rnn.parameters(), rnn_npu.parameters(), strict=True)
    )
    print(type(rnn).__name__.lower(), max((out - out_npu.cpu()).abs().max().item(), grads))

loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(x), batch_size=2, pin_memory=True
)
batches = [b.npu(non_blocking=True) for (b,) in loader]
print("pinned_loader", (torch.cat([b.cpu() for b in batches]) - x).abs().max().item())
