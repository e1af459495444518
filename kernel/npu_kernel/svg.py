"""Plots as hand-written SVG: a timeline of work per stream and a device memory map.

SVG keeps the kernel free of matplotlib (fast start) and renders in every frontend that
shows HTML. Each mark carries a <title>, so hovering shows what it is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

# One colour per bound (what limited the work), shared by the legend and the bars.
BOUND_COLOURS = {
    "cube": "#d62728",
    "vector": "#1f77b4",
    "memory": "#ff7f0e",
    "launch": "#7f7f7f",
    "aicpu": "#9467bd",
}
WIDTH = 720
LABEL_W = 90
ROW_H = 18
MAX_BARS = 3000  # beyond this the SVG gets heavy; the tables still count everything


@dataclass(frozen=True, slots=True)
class Bar:
    row: str  # "dev0 stream0"
    start_us: float
    duration_us: float
    bound: str
    title: str


def _legend(y: float) -> str:
    parts = []
    x = LABEL_W
    for bound, colour in BOUND_COLOURS.items():
        parts.append(
            f'<rect x="{x}" y="{y}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{y + 9}">{bound}</text>'
        )
        x += 80
    return "".join(parts)


def timeline(bars: Sequence[Bar]) -> str:
    """Bars on one row per stream, x = simulated microseconds, colour = bound."""
    shown = sorted(bars, key=lambda b: -b.duration_us)[:MAX_BARS]
    rows = sorted({b.row for b in bars})
    if not rows:
        return ""
    t0 = min(b.start_us for b in bars)
    t1 = max(b.start_us + b.duration_us for b in bars)
    span = max(t1 - t0, 1e-9)
    scale = (WIDTH - LABEL_W - 10) / span
    height = 24 + ROW_H * len(rows) + 28
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="sans-serif" font-size="10" role="img" aria-label="timeline">'
    ]
    for i, row in enumerate(rows):
        y = 20 + i * ROW_H
        out.append(f'<text x="2" y="{y + 12}">{html.escape(row)}</text>')
        out.append(
            f'<line x1="{LABEL_W}" x2="{WIDTH - 10}" y1="{y + ROW_H - 1}" '
            f'y2="{y + ROW_H - 1}" stroke="#8884"/>'
        )
    index = {row: i for i, row in enumerate(rows)}
    for b in shown:
        x = LABEL_W + (b.start_us - t0) * scale
        w = max(b.duration_us * scale, 0.5)
        y = 20 + index[b.row] * ROW_H + 2
        colour = BOUND_COLOURS.get(b.bound, "#7f7f7f")
        out.append(
            f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW_H - 5}" fill="{colour}">'
            f"<title>{html.escape(b.title)}</title></rect>"
        )
    out.append(f'<text x="{LABEL_W}" y="12">0 µs</text>')
    out.append(f'<text x="{WIDTH - 10}" y="12" text-anchor="end">{span:,.1f} µs</text>')
    out.append(_legend(24 + ROW_H * len(rows) + 6))
    out.append("</svg>")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Block:
    offset: int  # bytes from the start of the device's address space
    size: int
    label: str  # "Cell In[3], line 2" or "free"
    used: bool


def memory_map(capacity: int, blocks: Sequence[Block], title: str) -> str:
    """One horizontal strip: allocations (coloured by source line) over the address space."""
    if capacity <= 0:
        return ""
    palette = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    colour_of: dict[str, str] = {}
    bar_w = WIDTH - 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="64" '
        f'font-family="sans-serif" font-size="10" role="img" aria-label="memory map">',
        f'<text x="10" y="12">{html.escape(title)}</text>',
        f'<rect x="10" y="18" width="{bar_w}" height="24" fill="#8882" stroke="#8886"/>',
    ]
    for b in blocks:
        if not b.used:
            continue
        colour = colour_of.setdefault(b.label, palette[len(colour_of) % len(palette)])
        x = 10 + b.offset / capacity * bar_w
        w = max(b.size / capacity * bar_w, 0.5)
        out.append(
            f'<rect x="{x:.2f}" y="18" width="{w:.2f}" height="24" fill="{colour}">'
            f"<title>{html.escape(b.label)}: {b.size:,} bytes at +{b.offset:#x}</title></rect>"
        )
    out.append('<text x="10" y="56">0</text>')
    out.append(f'<text x="{10 + bar_w}" y="56" text-anchor="end">{capacity:,} bytes</text>')
    out.append("</svg>")
    return "".join(out)
