"""Device profiles: the figures from the reference, aliases, sources."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from npu_runtime.devices import DeviceProfile, get_profile, profile_names


def test_default_is_910b2() -> None:
    p = get_profile()
    assert (p.name, p.soc_name) == ("910B2", "Ascend910B2")
    assert get_profile("910B") is p


@pytest.mark.parametrize(
    ("name", "cores", "vec", "hbm", "l2", "clock"),
    [
        ("910B", 24, 48, 64 << 30, 192 << 20, 1.8e9),
        ("910B4", 20, 40, 32 << 30, 96 << 20, 1.5e9),
        ("910A", 32, 0, 32 << 30, 32 << 20, 1.0e9),
        ("310P", 8, 7, 24 << 30, 96 << 20, 1.08e9),
    ],
)
def test_core_figures(name: str, cores: int, vec: int, hbm: int, l2: int, clock: float) -> None:
    p = get_profile(name)
    assert (p.ai_core, p.vector_core, p.hbm_bytes, p.l2_bytes, p.clock_hz) == (
        cores,
        vec,
        hbm,
        l2,
        clock,
    )


def test_910b_peaks_follow_the_cube_arithmetic() -> None:
    p = get_profile("910B2")
    assert p.peak_flops["FLOAT16"] == pytest.approx(2 * 16 * 16 * 16 * 24 * 1.8e9, rel=1e-3)
    assert p.peak_flops["INT8"] == pytest.approx(2 * p.peak_flops["FLOAT16"], rel=1e-3)
    assert get_profile("910B4").peak_flops["FLOAT16"] == pytest.approx(245.76e12)


@pytest.mark.parametrize(
    ("name", "streams", "events"),
    [("910B", 1984, 65536), ("910A", 2048, 65535), ("310P", 1024, 1023)],
)
def test_stream_and_event_limits(name: str, streams: int, events: int) -> None:
    p = get_profile(name)
    assert (p.max_streams, p.max_events) == (streams, events)


def test_every_figure_names_its_source() -> None:
    skip = {"name", "soc_name", "sources"}
    for name in ("910B2", "910B4", "910A", "310P", "910C"):
        p = get_profile(name)
        for f in dataclasses.fields(DeviceProfile):
            if f.name not in skip:
                assert p.sources.get(f.name), f"{name}.{f.name} has no source"


def test_aliases_case_insensitive_and_unknown_is_clear() -> None:
    assert get_profile("ascend910b4").name == "910B4"
    assert "910B" in profile_names()
    with pytest.raises(ValueError, match="unknown device 'H100'; known: "):
        get_profile("H100")


HARDWARE_MD = Path(__file__).resolve().parents[3] / "shared" / "reference" / "acl" / "hardware.md"
# hardware.md §1 table row key -> (DeviceProfile field, scale from the table's unit)
_INI_ROWS = {
    "ai_core_cnt": ("ai_core", 1),
    "vector_core_cnt": ("vector_core", 1),
    "ai_cpu_cnt": ("ai_cpu", 1),
    "memory_size": ("hbm_bytes", 1),
    "l2_size": ("l2_bytes", 1),
    "cube_freq": ("clock_hz", 1_000_000),
}


def _ini_table() -> dict[str, list[str]]:
    """The §1 rows: key -> cells for 910B1, 910B2, 910B2C, 910B4."""
    rows: dict[str, list[str]] = {}
    for line in HARDWARE_MD.read_text().splitlines():
        m = re.match(r"\| `(\w+)`[^|]*\|(.*)\|", line)
        if m and m.group(1) in _INI_ROWS:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")][:4]
    return rows


@pytest.mark.parametrize(("profile", "column"), [("910B2", 1), ("910C", 2), ("910B4", 3)])
def test_figures_match_the_reference_ini_values(profile: str, column: int) -> None:
    table = _ini_table()
    assert set(table) == set(_INI_ROWS)
    p = get_profile(profile)
    for key, (field, scale) in _INI_ROWS.items():
        expected = int(re.match(r"\d+", table[key][column]).group()) * scale  # type: ignore[union-attr]
        assert getattr(p, field) == expected, (profile, key)
