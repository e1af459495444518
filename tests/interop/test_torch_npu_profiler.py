"""msprof-analyze advisor on a torch_npu.profiler run (torch_npu script under `ascend-lens run`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from interop_support import Tools, ascend_lens_run, only

pytest.importorskip("torch")


def test_advisor_reads_a_torch_npu_profiler_cycle(tools: Tools, tmp_path: Path) -> None:
    out = ascend_lens_run(tmp_path, "torch_npu_profiled.py")
    assert out == "done 12\n"
    rank = sorted((tmp_path / "tb").glob("*_ascend_pt"))[0]
    res = tools.run("msprof-analyze", "advisor", "all", "-d", rank, "-o", tmp_path / "out", "-l", "en", cwd=tmp_path)  # fmt: skip
    only((tmp_path / "out").glob("mstt_advisor_*.html"), "advisor HTML report")
    book = tools.workbook(
        only((tmp_path / "out/log").glob("mstt_advisor_*.xlsx"), "advisor workbook")
    )
    assert {"Overall Summary", "Block Dim Issues"} <= set(book), res.stdout
    # the Relu of the first Linear (64 x 512 floats) leaves vector cores idle on a 910B
    names = {row[1] for row in book["Block Dim Issues"][1:]}
    assert "Relu" in names
