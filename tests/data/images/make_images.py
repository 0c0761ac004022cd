#!/usr/bin/env python3
"""Writes the image set the image op is checked against (tests/integration/
test_pipeline_image.py): the committed files beside this script. Run again after changing it:

    .venv/bin/python tests/data/images/make_images.py

Every image is cut from scikit-learn's china.jpg (shipped in the sklearn package, no
download), in the formats and modes users send: odd sizes, gray, CMYK, palette, RGBA, 16-bit,
progressive, WebP, and a JPEG for each EXIF orientation."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import sklearn.datasets
from PIL import Image

HERE = Path(__file__).resolve().parent
SOURCE = Path(sklearn.datasets.__file__).parent / "images" / "china.jpg"


def main() -> None:
    for old in HERE.glob("*.*"):
        if old.suffix in (".jpg", ".png", ".webp"):
            old.unlink()
    base = Image.open(SOURCE).convert("RGB")
    small = base.resize((160, 120))
    for w, h in [(1, 1), (7, 3), (225, 224), (1001, 333), (300, 800)]:
        base.resize((w, h)).save(HERE / f"odd_{w}x{h}.jpg", quality=85)
    base.resize((257, 199)).save(HERE / "odd_257x199.png")
    small.convert("L").save(HERE / "gray.jpg", quality=85)
    small.convert("L").save(HERE / "gray.png")
    small.convert("CMYK").save(HERE / "cmyk.jpg", quality=85)
    small.convert("P").save(HERE / "palette.png")
    rgba = small.convert("RGBA")
    alpha = np.asarray(rgba).copy()
    alpha[..., 3] = np.linspace(0, 255, alpha.shape[1], dtype=np.uint8)[None, :]
    Image.fromarray(alpha, "RGBA").save(HERE / "rgba.png")
    small.save(HERE / "progressive.jpg", quality=85, progressive=True)
    small.save(HERE / "lossless.webp", lossless=True)
    # 16 bits a sample: Pillow opens RGB 16-bit PNGs as RGB (the high byte of each sample).
    wide = (np.asarray(small).astype(">u2") * 257).astype(">u2")
    with io.BytesIO() as out:
        _write_png16(wide, out)
        (HERE / "rgb16.png").write_bytes(out.getvalue())
    portrait = base.resize((90, 120))
    for orientation in range(1, 9):
        exif = Image.Exif()
        exif[0x0112] = orientation
        portrait.save(HERE / f"exif_{orientation}.jpg", quality=85, exif=exif)


def _write_png16(pixels: np.ndarray, out) -> None:
    """A 16-bit RGB PNG (Pillow writes no 16-bit RGB): IHDR, one IDAT, IEND."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(h))
    out.write(b"\x89PNG\r\n\x1a\n")
    out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)))
    out.write(chunk(b"IDAT", zlib.compress(raw, 9)))
    out.write(chunk(b"IEND", b""))


if __name__ == "__main__":
    main()
