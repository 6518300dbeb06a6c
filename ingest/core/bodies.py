"""How a page's raw bytes are stored: compressed, under the name of the codec used, so
that rows written under an earlier codec stay readable.

- ``zstd`` (level 1), written since migration ingest 0015: on the real pages of the
  extraction benchmark it keeps 19% of the bytes in 0.48 ms per page and reads them back
  in 0.26 ms (zlib level 1: 22%, 1.64 ms and 0.69 ms), time the ingest command and the
  workers spend on the cores extraction needs.
- ``zlib``: every body stored before.
"""

import zlib

import zstandard

CODEC = "zstd"  # what new bodies are written with
LEVEL = 1


class UnknownCodec(ValueError):
    pass


def pack(raw: bytes) -> bytes:
    """The raw bytes compressed with `CODEC` (the frame records the size)."""
    return zstandard.ZstdCompressor(level=LEVEL).compress(raw)


def unpack(codec: str, data: bytes) -> bytes:
    """The raw bytes of a body stored under `codec`."""
    if codec == "zstd":
        return zstandard.ZstdDecompressor().decompress(data)
    if codec == "zlib":
        return zlib.decompress(data)
    raise UnknownCodec(f"unknown body codec {codec!r}")
