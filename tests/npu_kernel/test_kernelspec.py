"""The kernelspec functions and `ascend-lens kernel install/list/uninstall`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_kernel import DISPLAY_NAME, KERNEL_NAME
from npu_kernel.cli import main
from npu_kernel.kernelspec import (
    LOGO_FILES,
    DeviceOptions,
    KernelSpecError,
    get_kernel_dict,
    make_kernel_cmd,
    media_dir,
    write_kernel_spec,
)
from tests.npu_kernel.conftest import run_cli


def test_argv_uses_absolute_interpreter_and_device_options() -> None:
    argv = make_kernel_cmd(DeviceOptions("910B", 2))
    assert os.path.isabs(argv[0])
    assert argv[0] == str(Path(sys.executable).absolute())
    assert argv[1:] == [
        "-m",
        "npu_kernel",
        "-f",
        "{connection_file}",
        "--device",
        "910B",
        "--devices",
        "2",
    ]


def test_relative_executable_is_made_absolute() -> None:
    assert os.path.isabs(make_kernel_cmd(DeviceOptions(), "python")[0])


def test_kernel_dict_names_and_debugger() -> None:
    spec = get_kernel_dict(DeviceOptions())
    assert spec["display_name"] == DISPLAY_NAME == "Python 3 (Ascend NPU, emulated)"
    assert spec["language"] == "python"
    assert spec["metadata"]["debugger"] is True
    assert spec["interrupt_mode"] == "signal"


@pytest.mark.parametrize("devices", [0, -1, 17])
def test_device_count_is_validated(devices: int) -> None:
    with pytest.raises(KernelSpecError, match="--devices"):
        DeviceOptions("910B", devices)


def test_write_kernel_spec_copies_logos(tmp_path: Path) -> None:
    path = write_kernel_spec(tmp_path / KERNEL_NAME, DeviceOptions())
    assert sorted(p.name for p in path.iterdir()) == sorted([*LOGO_FILES, "kernel.json"])
    assert (path / "logo-64x64.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((path / "kernel.json").read_text()) == get_kernel_dict(DeviceOptions())


def _env(prefix: Path) -> dict[str, str]:
    return {**os.environ, "JUPYTER_PATH": str(prefix / "share" / "jupyter")}


def test_install_list_uninstall_round_trip(tmp_path: Path) -> None:
    env = _env(tmp_path)
    proc = run_cli("install", "--prefix", str(tmp_path), "--devices", "4", env=env)
    assert proc.returncode == 0, proc.stderr
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert json.loads((spec_dir / "kernel.json").read_text())["argv"][-2:] == ["--devices", "4"]

    listed = json.loads(run_cli("list", "--json", env=env).stdout)
    ours = [row for row in listed if row["path"] == str(spec_dir)]
    assert ours and ours[0]["devices"] == 4 and ours[0]["executable_exists"] is True

    jupyter = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    specs = json.loads(jupyter.stdout)["kernelspecs"]
    assert specs[KERNEL_NAME]["resource_dir"] == str(spec_dir)
    assert specs[KERNEL_NAME]["spec"]["display_name"] == DISPLAY_NAME

    proc = run_cli("uninstall", "--prefix", str(tmp_path), env=env)
    assert proc.returncode == 0, proc.stderr
    assert not spec_dir.exists()
    proc = run_cli("uninstall", "--prefix", str(tmp_path), env=env)
    assert proc.returncode == 1
    assert "no kernelspec 'ascend-npu'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_prefix_install_says_how_jupyter_finds_it_and_list_agrees(tmp_path: Path) -> None:
    # No JUPYTER_PATH: a fresh user who installed into a prefix Jupyter does not search.
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    env |= {"HOME": str(home), "JUPYTER_DATA_DIR": str(home / "data")}
    prefix = tmp_path / "pfx"
    data_dir = prefix / "share" / "jupyter"
    spec_dir = data_dir / "kernels" / KERNEL_NAME
    proc = run_cli("install", "--prefix", str(prefix), env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"Installed kernelspec {KERNEL_NAME} in {spec_dir}",
        f"Jupyter does not look in {data_dir} by itself: run Jupyter (or the editor) with",
        f"  JUPYTER_PATH={data_dir}",
        "and `jupyter kernelspec list` and `ascend-lens kernel list` find it.",
    ]
    # Plain `list` names where it looked and how a prefix install is found.
    nothing = run_cli("list", env=env)
    assert nothing.returncode == 0
    assert nothing.stdout.startswith("No Ascend NPU kernelspec found. Looked in:\n")
    assert f"  {home / 'data' / 'kernels'}\n" in nothing.stdout
    assert "`ascend-lens kernel list --prefix DIR`" in nothing.stdout
    assert "JUPYTER_PATH includes DIR/share/jupyter" in nothing.stdout
    # `list --prefix` finds it and says Jupyter would not.
    listed = run_cli("list", "--prefix", str(prefix), env=env).stdout.splitlines()
    assert listed[0].startswith(f"{KERNEL_NAME}  910B x8  {spec_dir}  (")
    assert listed[0].endswith("[not on the Jupyter path]")
    assert listed[2] == f"  JUPYTER_PATH={data_dir}"
    # With the JUPYTER_PATH it was told, both Jupyter and `list` see it, with no hint.
    env["JUPYTER_PATH"] = str(data_dir)
    listed = run_cli("list", env=env).stdout.splitlines()
    assert len(listed) == 1 and listed[0].endswith(")") and str(spec_dir) in listed[0]
    rows = json.loads(run_cli("list", "--json", env=env).stdout)
    assert [(r["path"], r["on_jupyter_path"]) for r in rows] == [(str(spec_dir), True)]


def test_uninstall_refuses_a_foreign_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    foreign.mkdir(parents=True)
    (foreign / "kernel.json").write_text(json.dumps({"argv": ["python", "-m", "other"]}))
    assert main(["uninstall", "--prefix", str(tmp_path)]) == 1
    assert "not an Ascend NPU kernelspec" in capsys.readouterr().err
    assert foreign.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["install", "--devices", "0"], "--devices must be between 1 and 16"),
        (["install", "--device", "nosuch"], "unknown device 'nosuch'"),
        (["install", "--user", "--prefix", "/tmp"], "not allowed with argument"),
    ],
)
def test_bad_install_arguments_fail_cleanly(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) in (1, 2)  # 2: argparse usage error, 1: refused value
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_packaged_logos_match_media() -> None:
    media = Path(__file__).resolve().parents[2] / "media"
    for name in LOGO_FILES:
        assert (media_dir() / name).read_bytes() == (media / name).read_bytes(), name


def test_list_text_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    assert main(["install", "--prefix", str(tmp_path), "--device", "310P", "--devices", "2"]) == 0
    capsys.readouterr()
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    spec_dir = tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert f"ascend-npu  310P x2  {spec_dir}  ({Path(sys.executable).absolute()})" in out
