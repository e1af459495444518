"""tests/e2e/tools.sh installs Debian packages only as root on Debian, and otherwise skips the
end-to-end stage with a reason and the command to run (exit 77, which scripts/test reports)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tests" / "e2e" / "tools.sh"


def _bin(tmp_path: Path, *, uid: str, debian: bool) -> Path:
    """A PATH with the shell basics but no compiler or pkg-config; `id -u` says `uid`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("bash", "mkdir", "date", "dirname", "cat"):
        found = shutil.which(name)
        assert found, name
        (bin_dir / name).symlink_to(found)
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    if debian:
        (bin_dir / "dpkg").write_text("#!/bin/sh\nexit 1\n")  # nothing is installed
        # apt-get must never run for a user who cannot install: leave a mark if it does.
        (bin_dir / "apt-get").write_text(f"#!/bin/sh\ntouch {tmp_path}/apt-ran\nexit 0\n")
    for script in bin_dir.iterdir():
        if not script.is_symlink():
            script.chmod(0o755)
    return bin_dir


def test_e2e_tools_skip_when_apt_get_fails(tmp_path: Path) -> None:
    bin_dir = _bin(tmp_path, uid="0", debian=True)
    (bin_dir / "apt-get").write_text("#!/bin/sh\necho 'E: no mirror' >&2\nexit 100\n")
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "E2E_TOOLS": str(tmp_path / "tools")}
    proc = subprocess.run(
        ["bash", str(TOOLS)], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )
    assert proc.returncode == 77, proc.stderr
    lines = proc.stderr.splitlines()
    assert "apt-get install (as root, once): " in lines[0] and lines[1] == "E: no mirror"
    assert lines[2].startswith("e2e: skipped: apt-get could not install ")
    assert lines[-1] == "e2e: or set ASCEND_LENS_SKIP_E2E=1 to leave this stage out."
    assert os.listdir(tmp_path / "tools") == []


@pytest.mark.parametrize(
    ("uid", "debian", "reason"),
    [
        ("1000", True, "installing them needs root."),
        ("0", False, "this is not a Debian-based system (no apt-get)."),
    ],
)
def test_e2e_tools_skip_with_a_reason_where_they_cannot_install(
    tmp_path: Path, uid: str, debian: bool, reason: str
) -> None:
    env = {
        "PATH": str(_bin(tmp_path, uid=uid, debian=debian)),
        "HOME": str(tmp_path),
        "E2E_TOOLS": str(tmp_path / "tools"),
    }
    proc = subprocess.run(
        ["bash", str(TOOLS)], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )
    assert proc.returncode == 77, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 3, proc.stderr
    assert lines[0].startswith("e2e: skipped: it needs the Debian packages ")
    assert "libkrb5-dev build-essential pkg-config, and " + reason in lines[0]
    assert lines[1].startswith("e2e: install them with `sudo apt-get install ")
    assert lines[2] == "e2e: or set ASCEND_LENS_SKIP_E2E=1 to leave this stage out."
    assert not (tmp_path / "apt-ran").exists()
    assert not (tmp_path / "tools" / "node24").exists()  # nothing downloaded either
    assert os.listdir(tmp_path / "tools") == []
