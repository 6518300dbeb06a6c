"""Stored page bodies: every codec reads back what was written."""

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.core import bodies


@given(st.binary(max_size=20_000))
def test_a_packed_body_reads_back_under_the_codec_it_names(raw: bytes) -> None:
    assert bodies.unpack(bodies.CODEC, bodies.pack(raw)) == raw


@given(st.binary(max_size=20_000))
def test_bodies_stored_with_zlib_before_stay_readable(raw: bytes) -> None:
    assert bodies.unpack("zlib", zlib.compress(raw, 1)) == raw


def test_new_bodies_are_zstd_and_smaller_than_zlib_on_markup() -> None:
    page = b"<html><body>" + b"<p class='story'>The same paragraph.</p>\n" * 2000 + b"</body>"
    packed = bodies.pack(page)
    assert bodies.CODEC == "zstd"
    assert packed[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    assert len(packed) < len(zlib.compress(page, 1))


def test_an_unknown_codec_is_an_error_not_garbage() -> None:
    with pytest.raises(bodies.UnknownCodec):
        bodies.unpack("lzma", b"whatever")
