"""Images generated with Pillow for the multimodal tests and the dedupe benchmark.

`scene(seed)` draws a reproducible picture of random shapes over a gradient (distinct seeds give
distinct pictures); `variants(img)` makes the near-duplicates a resent photo turns into on its
way through chat apps (rescaled, recompressed, brightened, slightly cropped, noised).
"""

from __future__ import annotations

import base64
import io
import random
from collections.abc import Iterator
from typing import Any

from PIL import ExifTags, Image, ImageDraw, ImageEnhance, ImageFilter

# A GPS position no test should ever find stored: 37°46'30"N 122°25'10"W.
GPS_LAT = ((37, 1), (46, 1), (30, 1))
GPS_LON = ((122, 1), (25, 1), (10, 1))
CAPTURED = "2024:05:17 09:30:00"
CAMERA_SERIAL = "SN-GPS-TEST-4242"


def scene(seed: int, size: tuple[int, int] = (320, 240)) -> Image.Image:
    """A reproducible RGB picture: a two-colour gradient and a dozen random shapes."""
    rnd = random.Random(seed)
    width, height = size
    top = tuple(rnd.randrange(256) for _ in range(3))
    bottom = tuple(rnd.randrange(256) for _ in range(3))
    img = Image.new("RGB", size)
    draw = ImageDraw.Draw(img)
    for y in range(height):
        t = y / max(height - 1, 1)
        draw.line(
            [(0, y), (width, y)],
            fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)),
        )
    for _ in range(12):
        x0, y0 = rnd.randrange(width), rnd.randrange(height)
        x1, y1 = x0 + rnd.randrange(20, width // 2), y0 + rnd.randrange(20, height // 2)
        colour = tuple(rnd.randrange(256) for _ in range(3))
        shape = rnd.choice(("rectangle", "ellipse"))
        getattr(draw, shape)([x0, y0, x1, y1], fill=colour)
    return img


def variants(img: Image.Image, seed: int = 0) -> Iterator[tuple[str, Image.Image]]:
    """Near-duplicates of `img` as chat apps and screenshots produce them."""
    w, h = img.size
    yield "half-size", img.resize((w // 2, h // 2))
    yield "double-size", img.resize((w * 2, h * 2))
    yield "jpeg-q35", Image.open(io.BytesIO(encode(img, "JPEG", quality=35)))
    yield "brighter-10%", ImageEnhance.Brightness(img).enhance(1.1)
    yield "contrast-90%", ImageEnhance.Contrast(img).enhance(0.9)
    yield "crop-3%", img.crop((w * 3 // 100, h * 3 // 100, w - w * 3 // 100, h - h * 3 // 100))
    yield "blur", img.filter(ImageFilter.GaussianBlur(1.2))
    rnd = random.Random(seed)
    noisy = img.copy()
    px = noisy.load()
    assert px is not None
    for _ in range(w * h // 20):
        x, y = rnd.randrange(w), rnd.randrange(h)
        px[x, y] = tuple(min(255, max(0, c + rnd.randint(-40, 40))) for c in px[x, y])  # type: ignore[union-attr]
    yield "noise-5%", noisy


def encode(img: Image.Image, fmt: str = "PNG", **params: object) -> bytes:
    """`img` encoded as `fmt`."""
    out = io.BytesIO()
    img.save(out, fmt, **params)
    return out.getvalue()


def jpeg_with_gps(img: Image.Image) -> bytes:
    """`img` as a JPEG carrying EXIF GPS, a capture time and a camera serial number."""
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "TestCam"
    exif[ExifTags.Base.DateTime] = CAPTURED
    sub = exif.get_ifd(ExifTags.IFD.Exif)
    sub[ExifTags.Base.DateTimeOriginal] = CAPTURED
    sub[ExifTags.Base.BodySerialNumber] = CAMERA_SERIAL
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "N"
    gps[ExifTags.GPS.GPSLatitude] = tuple(a / b for a, b in GPS_LAT)
    gps[ExifTags.GPS.GPSLongitudeRef] = "W"
    gps[ExifTags.GPS.GPSLongitude] = tuple(a / b for a, b in GPS_LON)
    return encode(img, "JPEG", quality=90, exif=exif)


def data_url(data: bytes, mime: str) -> str:
    """A base64 data: URL."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def b64(data: bytes) -> str:
    """Base64 text of `data`."""
    return base64.b64encode(data).decode("ascii")


def metadata_forms(secret: bytes) -> list[bytes]:
    """`secret` raw, as hex, and in each of the three base64 alignments it can take."""
    out = [secret, secret.hex().encode()]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + secret)
        skip = (pad * 4 + 2) // 3 + 1  # characters touched by the padding bytes
        out.append(encoded[skip : skip + (len(secret) * 4) // 3 - 2])
    return out


async def dump_database(conn: Any) -> bytes:
    """Every value of every table of the connection's schema (bytea raw, the rest as text)."""
    chunks: list[bytes] = []
    tables = await conn.fetch(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
    )
    for t in tables:
        for row in await conn.fetch(f'SELECT * FROM "{t["table_name"]}"'):
            for value in row.values():
                if isinstance(value, bytes | bytearray | memoryview):
                    chunks.append(bytes(value))
                elif value is not None:
                    chunks.append(str(value).encode())
    return b"\n".join(chunks)
