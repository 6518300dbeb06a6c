"""Registrable domains: the public-suffix list's answer to "whose site is this host".

`entertainment.timesonline.co.uk` and `www.timesonline.co.uk` are one site's pages: its
templates are counted over both (a template spread over two hosts with a few pages on
each is a template all the same). The list is the snapshot the `publicsuffixlist` wheel
bundles (its version is pinned in pyproject.toml: a new snapshot may move a host to
another domain); nothing is fetched at run time. Private suffixes count (each
`*.github.io` or `*.blogspot.com` site is its own). An IP address, a single label or a
host the list does not know is its own domain. No Django here.
"""

from __future__ import annotations

import ipaddress
from functools import cache

from publicsuffixlist import PublicSuffixList


@cache
def _psl() -> PublicSuffixList:
    # The bundled snapshot (no source given: nothing is downloaded).
    return PublicSuffixList()


@cache
def registrable_domain(host: str) -> str:
    """The host's registrable domain (eTLD+1), lower-cased; the host itself when it
    has none (an IP address, `localhost`, a public suffix alone)."""
    host = host.strip().rstrip(".").lower()
    if not host:
        return host
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    return _psl().privatesuffix(host) or host
