"""Draw the kernelspec logos (media/logo-32x32.png, logo-64x64.png, logo-svg.svg).

The same files are written into kernel/npu_kernel/resources/, so an installed wheel (which
has no media/ folder) can still install the kernelspec with its logos; a test checks that
both copies match. No imaging library: the shape is a rounded square with an upward chevron, rasterised with
4x4 supersampling and written as an RGBA PNG with zlib. Run: python media/make_logos.py
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = (HERE, HERE.parent / "kernel" / "npu_kernel" / "resources")
BACKGROUND = (199, 0, 11)  # Ascend red
FOREGROUND = (255, 255, 255)
# The chevron in a 0..1 unit square, as a polygon (an "A" without its bar: ascend).
CHEVRON = [(0.50, 0.18), (0.84, 0.80), (0.68, 0.80), (0.50, 0.46), (0.32, 0.80), (0.16, 0.80)]
RADIUS = 0.18  # corner radius of the background square


def _in_rounded_square(x: float, y: float) -> bool:
    cx = min(max(x, RADIUS), 1 - RADIUS)
    cy = min(max(y, RADIUS), 1 - RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS**2


def _in_polygon(x: float, y: float, poly: list[tuple[float, float]]) -> bool:
    inside = False
    for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def _pixel(px: int, py: int, size: int, ss: int = 4) -> bytes:
    bg = fg = 0
    for sy in range(ss):
        for sx in range(ss):
            x = (px + (sx + 0.5) / ss) / size
            y = (py + (sy + 0.5) / ss) / size
            if _in_rounded_square(x, y):
                if _in_polygon(x, y, CHEVRON):
                    fg += 1
                else:
                    bg += 1
    n = ss * ss
    alpha = (bg + fg) / n
    if alpha == 0:
        return bytes(4)
    mix = fg / (bg + fg)
    rgb = (round(b + (f - b) * mix) for b, f in zip(BACKGROUND, FOREGROUND, strict=True))
    return bytes([*rgb, round(alpha * 255)])


def png(size: int) -> bytes:
    rows = b"".join(
        b"\x00" + b"".join(_pixel(px, py, size) for px in range(size)) for py in range(size)
    )

    def chunk(tag: bytes, data: bytes) -> bytes:
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def svg() -> str:
    r = RADIUS * 64
    pts = " ".join(f"{x * 64:g},{y * 64:g}" for x, y in CHEVRON)
    fill = "#{:02x}{:02x}{:02x}".format(*BACKGROUND)
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\n'
        f'  <rect width="64" height="64" rx="{r:g}" fill="{fill}"/>\n'
        f'  <polygon points="{pts}" fill="#ffffff"/>\n'
        "</svg>\n"
    )


def main() -> None:
    for target in TARGETS:
        target.mkdir(exist_ok=True)
        for size in (32, 64):
            (target / f"logo-{size}x{size}.png").write_bytes(png(size))
        (target / "logo-svg.svg").write_text(svg())


if __name__ == "__main__":
    main()
