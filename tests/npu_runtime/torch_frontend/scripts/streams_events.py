"""torch.npu.Stream / Event on the simulated clock: prints the measured milliseconds."""

import torch
import torch_npu  # noqa: F401

a = torch.randn(2048, 2048, device="npu", dtype=torch.float16)
torch.npu.synchronize()
side = torch.npu.Stream()
start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
with torch.npu.stream(side):
    start.record()
    b = a @ a  # @matmul
    end.record()
end.synchronize()
print("elapsed_ms", start.elapsed_time(end))
print("default_stream_restored", torch.npu.current_stream() == torch.npu.default_stream())
torch.npu.current_stream().wait_stream(side)
print("query", end.query(), side.query())
