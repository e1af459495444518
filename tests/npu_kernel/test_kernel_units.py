"""The kernel's small pieces on their own: tables, SVG, import watching, cell names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from npu_kernel.cells import CellLocator
from npu_kernel.imports import ImportWatcher
from npu_kernel.render import Report, html_table, text_table
from npu_kernel.svg import Bar, Block, memory_map, timeline
from npu_kernel.tracebacks import is_internal, user_traceback


def test_text_table_aligns_numbers_right() -> None:
    out = text_table(["op", "count", "µs"], [["MatMul", 3, 30.0], ["Add", 12, 2.5]])
    assert out.splitlines() == [
        "op      count     µs",
        "------  -----  -----",
        "MatMul      3  30.00",
        "Add        12   2.50",
    ]


def test_html_table_escapes_cells() -> None:
    out = html_table(["source"], [["a < b & c"]])
    assert "<td>a &lt; b &amp; c</td>" in out


def test_report_bundle_has_text_and_html_and_extra_mime() -> None:
    report = Report()
    report.add("Empty").table(["a"], [])
    bundle = report.bundle({"application/x-test": {"k": 1}})
    assert bundle["text/plain"] == "Empty\n(none)"
    assert "<div>(none)</div>" in bundle["text/html"]
    assert bundle["application/x-test"] == {"k": 1}


def test_timeline_places_bars_by_time_and_stream() -> None:
    svg = timeline(
        [
            Bar("dev0 stream0", 0.0, 10.0, "cube", "MatMul_1"),
            Bar("dev0 stream1", 10.0, 10.0, "memory", "Add_1 <x>"),
        ]
    )
    assert svg.count("<rect") == 2 + 5  # two bars, five legend swatches
    assert ">dev0 stream0<" in svg and ">dev0 stream1<" in svg
    assert "<title>Add_1 &lt;x&gt;</title>" in svg
    assert 'x="90.00"' in svg and 'x="400.00"' in svg  # 0 µs and half-way
    assert timeline([]) == ""


def test_memory_map_scales_blocks_to_capacity() -> None:
    svg = memory_map(1000, [Block(500, 250, "Cell In[1], line 2", True)], "dev 0")
    assert '<rect x="360.00" y="18" width="175.00"' in svg
    assert "Cell In[1], line 2: 250 bytes at +0x1f4" in svg


def test_import_watcher_calls_back_after_first_import(tmp_path: Path) -> None:
    (tmp_path / "watched_mod_for_test.py").write_text("VALUE = 7\n")
    sys.path.insert(0, str(tmp_path))
    seen: list[ModuleType] = []
    watcher = ImportWatcher()
    try:
        watcher.watch("watched_mod_for_test", seen.append)
        assert watcher in sys.meta_path
        import watched_mod_for_test  # noqa: F401

        assert [m.VALUE for m in seen] == [7]
        assert watcher not in sys.meta_path  # nothing left to watch
        watcher.watch("watched_mod_for_test", seen.append)  # already loaded: called now
        assert len(seen) == 2
    finally:
        watcher.close()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("watched_mod_for_test", None)


def test_shim_goes_on_path_without_importing_the_runtime() -> None:
    # The kernel starts as fast as plain ipykernel: locating the shim loads no runtime module.
    probe = (
        "import sys, os\n"
        "from npu_kernel.imports import ensure_shim_on_path\n"
        "shim = ensure_shim_on_path()\n"
        "assert shim in sys.path and os.path.isfile(os.path.join(shim, 'acl', '__init__.py'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('npu_runtime') or m == 'numpy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['npu_runtime', 'npu_runtime._shim']"


class _Compiler:
    def format_code_name(self, name: str) -> tuple[str, str] | None:
        return ("Cell", "In[4]") if name == "/tmp/ipykernel_1/abc.py" else None


def test_cell_locator_names_cells_and_files() -> None:
    cells = CellLocator(_Compiler())
    assert cells.place("/tmp/ipykernel_1/abc.py", 3).label == "Cell In[4], line 3"
    assert cells.cell_of("/tmp/ipykernel_1/abc.py") == 4
    assert cells.place(__file__, 1).label.endswith("test_kernel_units.py:1")
    assert (
        cells.place(__file__, 1).source
        == '"""The kernel\'s small pieces on their own: tables, SVG, import watching, cell names."""'
    )


def test_user_traceback_drops_our_frames() -> None:
    from npu_runtime.core.runtime import get_runtime

    rt = get_runtime()
    rt.reset()
    with pytest.raises(Exception) as info:
        rt.set_device(0)  # not initialised: raised inside npu_runtime
    frames = []
    tb = user_traceback(info.tb)
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert frames == [__file__]
    assert is_internal(sys.modules["npu_runtime.core.runtime"].__file__ or "")
    assert not is_internal(__file__)
