"""A training loop profiled with torch_npu.profiler exactly as torch_npu's docs show it."""

import torch
import torch_npu

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 16)).npu()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256).npu()
y = torch.randint(0, 16, (64,)).npu()
experimental_config = torch_npu.profiler._ExperimentalConfig(
    export_type=torch_npu.profiler.ExportType.Text,
    profiler_level=torch_npu.profiler.ProfilerLevel.Level1,
    aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization,
    l2_cache=False,
    data_simplification=False,
)
with torch_npu.profiler.profile(
    activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
    schedule=torch_npu.profiler.schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1),
    on_trace_ready=torch_npu.profiler.tensorboard_trace_handler("tb"),
    record_shapes=True,
    profile_memory=True,
    with_stack=False,
    with_flops=False,
    with_modules=False,
    experimental_config=experimental_config,
) as prof:
    for _step in range(12):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
print("done", prof.step_num)
