"""torch_npu.contrib: `transfer_to_npu` (import it for its side effect)."""
