#!/usr/bin/env python3
"""Draw the Wherefrom toolbar artwork as PNGs (16, 32, 48, 128) with the standard library only.

The artwork: a rounded square in the brand colour with a white map pin whose head holds a small
brand-coloured dot, and a white dotted trail leading to it ("where from"). The background worker
recolours it at run time (green / muted) by shifting the hue of coloured pixels and keeping the
whites, so the artwork uses only the brand colour and white.

    python3 extension/icons/make_icons.py   # rewrites icon-16.png ... icon-128.png beside it
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

BRAND = (64, 88, 214)  # #4058d6
WHITE = (255, 255, 255)
SIZES = (16, 32, 48, 128)
SS = 4  # supersampling per axis


def rounded_square(x: float, y: float) -> bool:
    r = 0.22
    cx = min(max(x, r), 1 - r)
    cy = min(max(y, r), 1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def pin(x: float, y: float) -> bool:
    """A pin: circle head at (0.60, 0.40) r=0.22 and a point at (0.60, 0.86)."""
    hx, hy, hr, tip = 0.60, 0.40, 0.22, 0.86
    if (x - hx) ** 2 + (y - hy) ** 2 <= hr * hr:
        return True
    if hy <= y <= tip:
        # tangent lines from the tip to the circle
        d = tip - hy
        half = math.asin(hr / d)
        width = (tip - y) * math.tan(half)
        return abs(x - hx) <= width
    return False


def pin_hole(x: float, y: float) -> bool:
    return (x - 0.60) ** 2 + (y - 0.40) ** 2 <= 0.085 ** 2


def trail(x: float, y: float, size: int) -> bool:
    dots = [(0.20, 0.80), (0.31, 0.71)] if size < 32 else [(0.17, 0.83), (0.27, 0.76), (0.37, 0.70)]
    r = 0.055 if size >= 32 else 0.07
    return any((x - dx) ** 2 + (y - dy) ** 2 <= r * r for dx, dy in dots)


def pixel(px: int, py: int, size: int) -> tuple[int, int, int, int]:
    acc = [0.0, 0.0, 0.0, 0.0]
    for sy in range(SS):
        for sx in range(SS):
            x = (px + (sx + 0.5) / SS) / size
            y = (py + (sy + 0.5) / SS) / size
            if not rounded_square(x, y):
                continue
            colour = BRAND
            if (pin(x, y) and not pin_hole(x, y)) or trail(x, y, size):
                colour = WHITE
            acc[0] += colour[0]
            acc[1] += colour[1]
            acc[2] += colour[2]
            acc[3] += 1
    n = SS * SS
    if acc[3] == 0:
        return (0, 0, 0, 0)
    return (round(acc[0] / acc[3]), round(acc[1] / acc[3]), round(acc[2] / acc[3]), round(255 * acc[3] / n))


def png(size: int) -> bytes:
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y, size)) for x in range(size)) for y in range(size)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def main() -> None:
    here = Path(__file__).resolve().parent
    for size in SIZES:
        (here / f"icon-{size}.png").write_bytes(png(size))
        print(f"icon-{size}.png")


if __name__ == "__main__":
    main()
