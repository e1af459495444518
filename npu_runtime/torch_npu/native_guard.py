"""A C++ device guard for the npu device, compiled on first use.

PyTorch's Python-defined PrivateUse1 guard (torch/csrc/acc) reports one device and no
current device, so the autograd engine has no worker for npu:N with N > 0 and backward()
there fails. This module builds a small `c10::impl::DeviceGuardImplInterface` for
PrivateUse1 with `torch.utils.cpp_extension.load_inline` (only c10 headers, no Python
binding: the library is loaded and driven through ctypes) and registers it before torch's
Python guard, whose registration then does nothing. The build is cached under
`~/.cache/ascend-lens/torch_extensions/`, keyed by the torch version and the source.

The guard keeps the current device index per host thread (the autograd engine sets it on
its device threads); `_backend.state.device` reads and writes that index once the guard is
loaded. Streams are each device's default stream; events are no-ops, as the emulator runs
every op when it is issued. The hooks also resize storages (`untyped_storage().resize_()`,
FSDP's way to free and re-allocate parameters): C++ calls back into
`_backend.resize_storage` for the new block and re-points the StorageImpl at it.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import sys
import warnings

_SOURCE = r"""
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/StorageImpl.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <string>

namespace {
using c10::Device;
using c10::DeviceIndex;
using c10::DeviceType;
using c10::Stream;
constexpr DeviceType kNpu = DeviceType::PrivateUse1;

thread_local DeviceIndex current_index = 0;
DeviceIndex device_count = 1;

Device resolve(Device d) {
  return Device(kNpu, d.index() < 0 ? current_index : d.index());
}

struct NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  DeviceType type() const override { return kNpu; }
  Device exchangeDevice(Device d) const override {
    Device old(kNpu, current_index);
    setDevice(d);
    return old;
  }
  Device getDevice() const override { return Device(kNpu, current_index); }
  void setDevice(Device d) const override {
    TORCH_CHECK(d.type() == kNpu, "expected an npu device, got ", d);
    if (d.index() < 0) return;
    TORCH_CHECK(d.index() < device_count, "Invalid device ordinal ", int(d.index()),
                ": the process sees ", int(device_count), " NPU device(s)");
    current_index = d.index();
  }
  void uncheckedSetDevice(Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < device_count) current_index = d.index();
  }
  Stream getStream(Device d) const noexcept override {
    return Stream(Stream::DEFAULT, resolve(d));
  }
  Stream getDefaultStream(Device d) const override {
    return Stream(Stream::DEFAULT, resolve(d));
  }
  Stream getNewStream(Device d, int /*priority*/) const override {
    return Stream(Stream::DEFAULT, resolve(d));
  }
  Stream exchangeStream(Stream s) const noexcept override {
    return Stream(Stream::DEFAULT, s.device());
  }
  DeviceIndex deviceCount() const noexcept override { return device_count; }
  // Every op has run when it returns: events and streams have nothing to wait for.
  void record(void** /*event*/, const Stream& /*stream*/, const DeviceIndex /*index*/,
              const c10::EventFlag /*flag*/) const override {}
  void block(void* /*event*/, const Stream& /*stream*/) const override {}
  bool queryEvent(void* /*event*/) const override { return true; }
  void destroyEvent(void* /*event*/, const DeviceIndex /*index*/) const noexcept override {}
  void synchronizeEvent(void* /*event*/) const override {}
  bool queryStream(const Stream& /*stream*/) const override { return true; }
  void synchronizeStream(const Stream& /*stream*/) const override {}
  void synchronizeDevice(const DeviceIndex /*index*/) const override {}
};

// torch.Generator(device="npu"): a CPU (mt19937) generator that names the npu device, as
// the emulator computes every op on the host; ops draw from it through a CPU generator
// that takes its state (aten.py).
struct NpuGeneratorImpl final : public at::CPUGeneratorImpl {
  explicit NpuGeneratorImpl(DeviceIndex index) {
    device_ = Device(kNpu, index);
    key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
  }
  NpuGeneratorImpl* clone_impl() const override {
    auto* self = const_cast<NpuGeneratorImpl*>(this);  // CPUGeneratorImpl's getters are not const
    auto* g = new NpuGeneratorImpl(device_.index());
    g->set_engine(self->engine());
    g->set_next_float_normal_sample(self->next_float_normal_sample());
    g->set_next_double_normal_sample(self->next_double_normal_sample());
    return g;
  }
};

using HasContext = int (*)(int);
HasContext has_context = nullptr;  // Python: is the emulated device open?

// Python (_backend.resize_storage): give the storage (by its StorageImpl address) a block
// of `nbytes` on npu:device, keeping min(old, new) bytes. 0 = done and *out holds the new
// device address (0 for no block); 1 = out of memory, 2 = another error, message in `msg`.
using ResizeBytes = int (*)(std::uintptr_t, int, std::uint64_t, std::uint64_t*, char*, int);
ResizeBytes resize_bytes = nullptr;

struct NpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(DeviceIndex index) const override {
    return has_context != nullptr && has_context(index) != 0;
  }
  at::Generator getNewGenerator(DeviceIndex index) const override {
    if (index < 0) index = current_index;
    TORCH_CHECK(index < device_count, "Invalid device ordinal ", int(index),
                ": the process sees ", int(device_count), " NPU device(s)");
    return at::make_generator<NpuGeneratorImpl>(index);
  }
  // untyped_storage().resize_() (FSDP frees and re-allocates parameter storage this way).
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    TORCH_CHECK(resize_bytes != nullptr, "npu storage resizing is not available");
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    Device device = impl->device();
    std::uint64_t addr = 0;
    char msg[512] = {0};
    int rc = resize_bytes(reinterpret_cast<std::uintptr_t>(impl), device.index(),
                          static_cast<std::uint64_t>(newsize), &addr, msg, sizeof(msg));
    TORCH_CHECK_WITH(OutOfMemoryError, rc != 1, std::string(msg));
    TORCH_CHECK(rc == 0, std::string(msg));
    impl->set_data_ptr_noswap(
        at::DataPtr(reinterpret_cast<void*>(static_cast<std::uintptr_t>(addr)), device));
    impl->set_nbytes(newsize);
  }
};
}  // namespace

extern "C" {
int ascend_lens_npu_register_guard(int count) {
  device_count = static_cast<DeviceIndex>(count);
  static NpuGuardImpl* impl = new NpuGuardImpl();  // leaked, as the registry requires
  c10::impl::registerDeviceGuard(kNpu, impl);
  return 0;
}
int ascend_lens_npu_register_hooks(HasContext callback, ResizeBytes resize) {
  if (at::isPrivateUse1HooksRegistered()) return 1;
  has_context = callback;
  resize_bytes = resize;
  at::RegisterPrivateUse1HooksInterface(new NpuHooks());  // leaked: lives with the process
  return 0;
}
void ascend_lens_npu_set_count(int count) { device_count = static_cast<DeviceIndex>(count); }
int ascend_lens_npu_get_device() { return current_index; }
void ascend_lens_npu_set_device(int index) { current_index = static_cast<DeviceIndex>(index); }
}
"""

_lib: ctypes.CDLL | None = None
_failed = False  # the build failed once in this process: warned, not retried


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ascend-lens", "torch_extensions")


def build_name() -> str:
    import torch

    key = hashlib.sha256(f"{torch.__version__}\0{_SOURCE}".encode()).hexdigest()[:16]
    return f"ascend_lens_npu_guard_{key}"


def _ninja_on_path() -> None:
    """cpp_extension runs `ninja` from PATH; the PyPI wheel's binary may not be on it."""
    try:
        import ninja  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return
    bin_dir = getattr(ninja, "BIN_DIR", None)
    path = os.environ.get("PATH", "")
    if bin_dir and bin_dir not in path.split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + path if path else bin_dir


def _build() -> ctypes.CDLL:
    name = build_name()
    build_dir = os.path.join(cache_dir(), name)
    os.makedirs(build_dir, exist_ok=True)
    _ninja_on_path()
    # Compiler-version notices (a warning and a log record) are not the user's business, nor is
    # the "No CUDA runtime is found" record a CUDA build of torch logs when the module is imported.
    log = logging.getLogger("torch.utils.cpp_extension")
    level = log.level
    log.setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torch.utils.cpp_extension import load_inline

            path = load_inline(
                name,
                cpp_sources=[_SOURCE],
                build_directory=build_dir,
                is_python_module=False,
                no_implicit_headers=True,
                extra_cflags=["-O1"],
                with_cuda=False,
                verbose=False,
            )
        finally:
            log.setLevel(level)
    return ctypes.CDLL(str(path))


def install(device_count: int) -> bool:
    """Build (or load the cached build), register the guard for `device_count` devices and
    the PrivateUse1 hooks (generators). False, after one warning line on stderr, where no
    C++ compiler can build it."""
    global _lib, _failed
    if _lib is not None:
        return True
    if _failed:
        return False
    try:
        lib = _build()
    except Exception as exc:  # no compiler, no ninja, a failed build: the Python guard stays
        print(
            f"ascend-lens: warning: could not build the npu device guard ({_reason(exc)}): "
            'backward() on npu:N with N > 0 and torch.Generator(device="npu") need a '
            "C++ compiler (g++); npu:0 works",
            file=sys.stderr,
        )
        _failed = True
        return False
    lib.ascend_lens_npu_register_guard.argtypes = [ctypes.c_int]
    lib.ascend_lens_npu_get_device.restype = ctypes.c_int
    lib.ascend_lens_npu_set_device.argtypes = [ctypes.c_int]
    lib.ascend_lens_npu_set_count.argtypes = [ctypes.c_int]
    lib.ascend_lens_npu_register_guard(device_count)
    lib.ascend_lens_npu_register_hooks.argtypes = [_HAS_CONTEXT, _RESIZE_BYTES]
    lib.ascend_lens_npu_register_hooks(_has_context_cb, _resize_bytes_cb)
    _lib = lib
    return True


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    if text.startswith("Error building extension"):
        return f"the C++ compiler {os.environ.get('CXX', 'c++')!r} failed"
    return (text.splitlines() or [type(exc).__name__])[0][:120]


def _has_context(index: int) -> int:
    from npu_runtime.core.runtime import get_runtime

    return int(index in get_runtime().devices)


_HAS_CONTEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
_has_context_cb = _HAS_CONTEXT(_has_context)  # kept alive: C++ holds the pointer


def _resize_bytes(
    impl: int,
    device: int,
    nbytes: int,
    out: ctypes._Pointer[ctypes.c_uint64],
    msg: int,
    msg_len: int,
) -> int:
    """Resize the storage at StorageImpl address `impl`; exceptions become codes (ctypes
    would print and drop them) and a message C++ raises with."""
    import torch

    from npu_runtime.torch_npu import _backend

    try:
        out[0] = _backend.resize_storage(impl, device, nbytes)
        return 0
    except torch.OutOfMemoryError as exc:
        code, text = 1, str(exc)
    except Exception as exc:
        code, text = 2, str(exc) or type(exc).__name__
    data = text.encode("utf-8", "replace")[: msg_len - 1] + b"\0"
    ctypes.memmove(msg, data, len(data))
    return code


_RESIZE_BYTES = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_uint64,
    ctypes.POINTER(ctypes.c_uint64),
    ctypes.c_void_p,
    ctypes.c_int,
)
_resize_bytes_cb = _RESIZE_BYTES(_resize_bytes)


def get_device() -> int:
    assert _lib is not None
    return int(_lib.ascend_lens_npu_get_device())


def set_device(index: int) -> None:
    assert _lib is not None
    _lib.ascend_lens_npu_set_device(index)


def set_count(device_count: int) -> None:
    """The runtime's device count changed (the kernel's %npu_device before any device)."""
    if _lib is not None:
        _lib.ascend_lens_npu_set_count(device_count)
