"""The `ascend-lens` dispatcher, run as a subprocess as users run it, and the layering it sits on."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = [sys.executable, "-m", "ascend_lens"]
REPO = Path(__file__).resolve().parents[1]


def test_help_lists_every_subcommand() -> None:
    out = subprocess.run([*EXE, "--help"], capture_output=True, text=True, check=True).stdout
    for name in ("check", "run", "server", "debug-adapter", "kernel"):
        assert f"  {name}" in out


@pytest.mark.parametrize("argv", [[], ["no-such-command"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    proc = subprocess.run([*EXE, *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "usage: ascend-lens" in proc.stdout + proc.stderr


def test_console_script_is_the_dispatcher() -> None:
    script = Path(sys.executable).with_name("ascend-lens")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("ascend-lens ")


def _imported(package_dir: Path) -> dict[str, set[str]]:
    """Top-level package names each module of `package_dir` imports, by relative path."""
    found: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
        found[os.path.relpath(path, REPO)] = names
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        # The runtime is the core: it names no shell and not the command line above them.
        ("npu_runtime", {"ascend_lens", "npu_lsp", "npu_debug", "npu_kernel"}),
        # Shells share the core, never each other.
        ("server/npu_debug", {"ascend_lens", "npu_kernel", "npu_lsp"}),
        ("kernel/npu_kernel", {"ascend_lens", "npu_debug", "npu_lsp"}),
        ("server/npu_lsp", {"ascend_lens", "npu_debug", "npu_kernel"}),
    ],
)
def test_parts_import_only_what_is_below_them(package: str, forbidden: set[str]) -> None:
    offenders = {
        path: sorted(names & forbidden)
        for path, names in _imported(REPO / package).items()
        if names & forbidden
    }
    assert offenders == {}
