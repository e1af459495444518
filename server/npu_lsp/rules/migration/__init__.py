"""CUDA/torch to Ascend migration rules (NPU2xx), one module per rule."""

from npu_lsp.rules.migration import (  # noqa: F401  (imported to register the rules)
    cuda_backend_setting,
    cuda_device_string,
    cuda_method_call,
    cuda_only_extension,
    cuda_torch_device,
    cudnn_backend_setting,
    missing_torch_npu_import,
    nccl_backend,
    scaled_dot_product_attention,
    torch_compile_default_backend,
    torch_cuda_amp,
    torch_cuda_api,
)
