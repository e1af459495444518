"""npu:N with N > 0 under `ascend-lens run`: the C++ device guard built on first use
(backward, training after torch.npu.set_device, torch.Generator(device="npu")), its cache,
and the Python guard that remains without a compiler."""

from __future__ import annotations

from pathlib import Path

from torch_support import SCRIPTS, run

BACKWARD_NPU1 = (
    "import torch, torch_npu\n"
    "x = torch.randn(4, 4, device='npu:{i}', requires_grad=True)\n"
    "(x * 2).sum().backward()\n"
    "print(x.grad.device, x.grad.cpu().eq(2).all().item())\n"
)


def _lines(stdout: str) -> dict[str, str]:
    return dict(ln.split(" ", 1) for ln in stdout.splitlines() if " " in ln)


def test_backward_training_and_generators_on_npu_n() -> None:
    r = run("--no-summary", SCRIPTS / "multi_device.py")
    assert r.returncode == 0, r.stderr
    lines = _lines(r.stdout)
    assert lines["grad"] == "npu:1 npu:1 True True"
    # the autograd engine's device thread sees npu:3 current; the main thread keeps npu:0
    assert lines["backward_current"] == "3 npu:3"
    assert lines["main_current"] == "0 npu:3"
    assert lines["train"] == "{'npu:2'} {'npu:2'} True"
    assert lines["generator"] == "npu:1 npu:2 npu:1 True True"
    assert lines["replay"] == "True"
    assert lines["bad_generator"] == "Invalid device ordinal 8: the process sees 8 NPU device(s)"
    assert "device guard" not in r.stderr


def _built(cache: Path) -> list[Path]:
    """The guard libraries in a cache (one per torch version and source)."""
    return list((cache / "ascend-lens" / "torch_extensions").glob("ascend_lens_npu_guard_*/*.so"))


def test_first_use_builds_the_guard_into_the_cache_and_later_runs_reuse_it(
    tmp_path: Path,
) -> None:
    script = tmp_path / "b.py"
    script.write_text(BACKWARD_NPU1.format(i=1))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = run("--no-summary", script, env=env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == ["npu:1 True"]
    (so,) = _built(tmp_path / "cache")
    built = so.stat().st_mtime_ns
    again = run("--no-summary", script, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["npu:1 True"]
    assert _built(tmp_path / "cache") == [so] and so.stat().st_mtime_ns == built


def test_without_a_compiler_one_warning_line_and_npu0_backward_still_works(
    tmp_path: Path,
) -> None:
    script = tmp_path / "b.py"
    script.write_text(BACKWARD_NPU1.format(i=0))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "CXX": str(tmp_path / "no-such-c++")}
    r = run("--no-summary", script, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["npu:0 True"]
    warning = [ln for ln in r.stderr.splitlines() if "device guard" in ln]
    assert warning == [
        "ascend-lens: warning: could not build the npu device guard (the C++ compiler "
        f"'{tmp_path / 'no-such-c++'}' failed): backward() on npu:N with N > 0 and "
        'torch.Generator(device="npu") need a C++ compiler (g++); npu:0 works'
    ]
    assert "WARNING" not in r.stderr and "Traceback" not in r.stderr
    assert _built(tmp_path / "cache") == []
