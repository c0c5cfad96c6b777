"""The Phase A checker: which tapped requests break "off sends nothing".

Excluded from every check, and why:
- positive controls (path /__wf_control/...): the harness's own probes, made before the window;
- requests to `wf-gaia.invalid`: Chromium's GAIA ListAccounts, pointed there by --gaia-url; it
  carries no page data and no extension sends it;
- CONNECT to the tab's own host: Chromium preconnecting to the site being browsed (the page itself
  is answered by Playwright routing). It carries only that host, to that host.
Everything else is ours to explain. Any request that would leave the machine (a CONNECT to another
host, plain HTTP to a non-loopback host) is a violation in every variant.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..sites import collapse
from .browser import NOISE_HOSTS
from .tap import LOOPBACK, Record


@dataclasses.dataclass
class Violation:
    record: Record
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, **self.record.summary()}


def is_excluded(r: Record, own_hosts: Iterable[str]) -> bool:
    if r.is_control or r.host in NOISE_HOSTS:
        return True
    return r.is_connect and r.host in set(own_hosts)


def relevant(records: Iterable[Record], own_hosts: Iterable[str]) -> list[Record]:
    own = set(own_hosts)
    return [r for r in records if not is_excluded(r, own)]


def needles_for(
    url: str,
    host: str,
    title: str = "",
    turns: Iterable[dict[str, Any]] = (),
    extra: Iterable[str] = (),
) -> list[str]:
    """What identifies a tab: its URL, host, title, and snippets of its content."""
    out = [url, host]
    if len(title.strip()) >= 4:
        out.append(collapse(title))
    for t in turns:
        text = collapse(str(t.get("text", "")))
        if len(text) >= 16:
            out.append(text[:48])
        elif len(text) >= 8:
            out.append(text)
    out += [collapse(x) for x in extra if x and len(collapse(x)) >= 6]
    seen: list[str] = []
    for n in out:
        if n and n.lower() not in (s.lower() for s in seen):
            seen.append(n)
    return seen


def violations(
    records: Iterable[Record],
    *,
    own_hosts: Iterable[str],
    needles: list[str] | None,
    server_ports: Iterable[int] = (),
) -> list[Violation]:
    """needles None: every relevant request is a violation (page memory off: zero requests at all).
    Otherwise a request is a violation when it carries any needle, would leave the machine, or
    goes to a loopback port that is not the test's own server (someone else's process)."""
    out: list[Violation] = []
    ports = set(server_ports)
    for r in relevant(records, own_hosts):
        if r.is_connect or r.host not in LOOPBACK:
            out.append(Violation(r, f"would leave the machine ({r.method} {r.url})"))
            continue
        if ports and r.port not in ports:
            out.append(Violation(r, f"to a loopback port that is not the test's server ({r.url})"))
            continue
        if needles is None:
            out.append(Violation(r, "a request while page memory is off"))
            continue
        hay = r.haystack().lower()
        for n in needles:
            if n.lower() in hay:
                out.append(Violation(r, f"carries {n[:60]!r}"))
                break
    return out
