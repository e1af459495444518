"""Build, install, list and remove the `ascend-npu` kernelspec, as small pure functions.

The argv uses the absolute path of the running interpreter: editors hide kernels whose
`python` does not resolve, and a bare name would pick whatever is first on PATH.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_kernel import DISPLAY_NAME, KERNEL_NAME

DEFAULT_DEVICE = "910B"
DEFAULT_DEVICES = 8  # the runtime's own default: an Atlas 800T A2 has eight 910B
LOGO_FILES = ("logo-32x32.png", "logo-64x64.png", "logo-svg.svg")


class KernelSpecError(Exception):
    """A kernelspec operation failed for a reason the user can fix (shown without traceback)."""


@dataclass(frozen=True, slots=True)
class DeviceOptions:
    """The emulated devices a kernel starts with."""

    device: str = DEFAULT_DEVICE
    devices: int = DEFAULT_DEVICES

    def __post_init__(self) -> None:
        if not self.device.strip():
            raise KernelSpecError("--device must name a device profile, e.g. 910B")
        if not 1 <= self.devices <= 16:
            raise KernelSpecError(f"--devices must be between 1 and 16, not {self.devices}")

    def argv(self) -> list[str]:
        return ["--device", self.device, "--devices", str(self.devices)]


def media_dir() -> Path:
    """Where the logos live: the package's copy of media/ (present in wheels too)."""
    return Path(__file__).resolve().parent / "resources"


def make_kernel_cmd(options: DeviceOptions, executable: str | None = None) -> list[str]:
    """The kernel's argv: absolute interpreter, our module, the connection file, devices."""
    exe = str(Path(executable or sys.executable).absolute())
    return [exe, "-m", "npu_kernel", "-f", "{connection_file}", *options.argv()]


def get_kernel_dict(options: DeviceOptions, executable: str | None = None) -> dict[str, Any]:
    """The content of kernel.json."""
    return {
        "argv": make_kernel_cmd(options, executable),
        "display_name": DISPLAY_NAME,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {
            "debugger": True,
            "ascend-lens": {"device": options.device, "devices": options.devices},
        },
    }


def write_kernel_spec(
    path: Path | None, options: DeviceOptions, executable: str | None = None
) -> Path:
    """Write kernel.json and the logos into `path` (a fresh temp dir when None); return it."""
    target = Path(tempfile.mkdtemp(suffix="_kernels")) / KERNEL_NAME if path is None else path
    target.mkdir(parents=True, exist_ok=True)
    logos = media_dir()
    for name in LOGO_FILES:
        src = logos / name
        if src.is_file():
            shutil.copyfile(src, target / name)
    spec = get_kernel_dict(options, executable)
    (target / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return target


def _target_kwargs(user: bool, sys_prefix: bool, prefix: str | None) -> dict[str, Any]:
    if sum((user, sys_prefix, prefix is not None)) > 1:
        raise KernelSpecError("choose at most one of --user, --sys-prefix and --prefix")
    if sys_prefix:
        return {"prefix": sys.prefix}
    if prefix is not None:
        return {"prefix": str(Path(prefix).absolute())}
    return {"user": True}  # the default: it needs no privileges


def install(
    options: DeviceOptions,
    *,
    user: bool = False,
    sys_prefix: bool = False,
    prefix: str | None = None,
) -> Path:
    """Install the kernelspec (for the user unless a prefix is given); return where it went."""
    from jupyter_client.kernelspec import KernelSpecManager

    kwargs = _target_kwargs(user, sys_prefix, prefix)
    with tempfile.TemporaryDirectory() as tmp:
        source = write_kernel_spec(Path(tmp) / KERNEL_NAME, options)
        try:
            dest = KernelSpecManager().install_kernel_spec(str(source), KERNEL_NAME, **kwargs)
        except OSError as exc:
            raise KernelSpecError(
                f"cannot write the kernelspec: {exc}; try --user or --prefix DIR"
            ) from exc
    return Path(dest)


@dataclass(frozen=True, slots=True)
class InstalledSpec:
    """One installed kernelspec that runs this kernel."""

    name: str
    path: Path
    executable: str
    device: str
    devices: int
    executable_exists: bool


def _ours(argv: list[str]) -> bool:
    return len(argv) >= 3 and argv[1:3] == ["-m", "npu_kernel"]


def _option(argv: list[str], flag: str, default: str) -> str:
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else default


def _count(text: str) -> int:
    """A device count from a hand-edited kernel.json: 0 marks an unreadable value."""
    return int(text) if text.isdigit() else 0


def jupyter_kernel_dirs() -> list[Path]:
    """Where Jupyter looks for kernelspecs, in its order (JUPYTER_PATH first)."""
    from jupyter_core.paths import jupyter_path

    return [Path(p) for p in jupyter_path("kernels")]


def prefix_kernel_dir(prefix: str) -> Path:
    """Where `install --prefix DIR` puts kernelspecs: DIR/share/jupyter/kernels."""
    return Path(prefix).absolute() / "share" / "jupyter" / "kernels"


def on_jupyter_path(spec_dir: Path) -> bool:
    """Whether Jupyter (and editors using it) finds the kernelspec installed in `spec_dir`."""
    parent = spec_dir.absolute().parent
    return any(parent == d.absolute() for d in jupyter_kernel_dirs())


def list_installed(prefix: str | None = None) -> list[InstalledSpec]:
    """Every kernelspec whose argv runs npu_kernel: on the Jupyter path, and in the kernels
    folder of `prefix` (an `install --prefix` location Jupyter may not be told about)."""
    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    if prefix is not None:
        manager.kernel_dirs = [str(prefix_kernel_dir(prefix)), *manager.kernel_dirs]
    found: list[InstalledSpec] = []
    for name, info in sorted(manager.get_all_specs().items()):
        argv = list(info["spec"].get("argv", []))
        if not _ours(argv):
            continue
        found.append(
            InstalledSpec(
                name=name,
                path=Path(info["resource_dir"]),
                executable=argv[0],
                device=_option(argv, "--device", DEFAULT_DEVICE),
                devices=_count(_option(argv, "--devices", str(DEFAULT_DEVICES))),
                executable_exists=Path(argv[0]).is_file(),
            )
        )
    return found


def uninstall(
    name: str = KERNEL_NAME,
    *,
    user: bool = False,
    sys_prefix: bool = False,
    prefix: str | None = None,
) -> Path:
    """Remove an installed kernelspec of ours; from one location when a flag picks it."""
    from jupyter_client.kernelspec import KernelSpecManager

    if user or sys_prefix or prefix is not None:
        kwargs = _target_kwargs(user, sys_prefix, prefix)
        if "prefix" in kwargs:
            root = Path(kwargs["prefix"]) / "share" / "jupyter" / "kernels"
        else:
            root = Path(KernelSpecManager().user_kernel_dir)
        path = root / name
        if not (path / "kernel.json").is_file():
            raise KernelSpecError(f"no kernelspec {name!r} in {root}")
    else:
        specs = {s.name: s.path for s in list_installed()}
        if name not in specs:
            raise KernelSpecError(f"no installed Ascend NPU kernelspec named {name!r}")
        path = specs[name]
    argv = json.loads((path / "kernel.json").read_text()).get("argv", [])
    if not _ours(argv):
        raise KernelSpecError(f"{path} is not an Ascend NPU kernelspec; left in place")
    try:
        shutil.rmtree(path)
    except OSError as exc:
        raise KernelSpecError(f"cannot remove {path}: {exc}") from exc
    return path
