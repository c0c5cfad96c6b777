"""The one provenance stamp. Every writer of a stored item calls `stamp`.

A stamp is (source_url normalised, source_host, source_ref). tests/test_provenance_writers.py
finds every INSERT/UPDATE of the item tables in server/ and proves it goes through here.
"""

from __future__ import annotations

import dataclasses

from server.textcaps import cap
from server.urls import host_of, normalise_url

MAX_REF_CHARS = 500


@dataclasses.dataclass(frozen=True)
class Provenance:
    source_url: str
    source_host: str
    source_ref: str

    def columns(self) -> dict[str, str]:
        return dataclasses.asdict(self)


def restamp(prov: Provenance, ref: str | None) -> Provenance:
    """The same (already stamped) page with another title or native id (capped): what `stamp`
    would give for its URL, without normalising it again (a thread of 1,000 turns, one page)."""
    return dataclasses.replace(prov, source_ref=cap((ref or "").strip(), MAX_REF_CHARS, ellipsis=True))


def stamp(url: str, ref: str | None) -> Provenance:
    """Normalise `url` and pair it with its host and a title or native id (capped)."""
    source_url = normalise_url(url)
    return Provenance(source_url, host_of(source_url), cap((ref or "").strip(), MAX_REF_CHARS, ellipsis=True))
