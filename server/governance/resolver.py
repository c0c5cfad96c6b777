"""The one authority for site modes (extension/shared/resolver.js mirrors it; both run
fixtures/policy-cases.json).

resolve(host, snapshot):
1. the most specific user rule whose host equals the host or is a parent of it (whole labels);
2. a sensitive default matched the same way (a domain entry, a suffix rule such as `bank`,
   or a first-label rule such as `login.` on a host of three labels or more) — and a sensitive
   default on a MORE specific host than the winning user rule beats that rule;
3. the global default.
IP literals and single-label names match only exactly. A rule the snapshot marks `exact` (a
rule on a public suffix such as `wiki` or `com`: policy.covers_subdomains) covers only its own
host; a rule on an IPv4 address also covers its IPv4-mapped IPv6 spelling. The result carries
its reason.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from typing import Any

from server.urls import (  # the host rules live with the URL rule
    clean_host,
    embedded_ipv4,
    host_parents,
    is_ip_literal,
    mapped_ipv4_spelling,
)

__all__ = ["MODES", "Resolution", "clean_host", "embedded_ipv4", "is_ip_literal", "resolve"]

MODES = ("off", "suggest", "collect")


@dataclasses.dataclass(frozen=True)
class Resolution:
    host: str
    mode: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


_parents = host_parents  # host itself, then each parent by whole labels (server.urls)


def _depth(host: str) -> int:
    return 1 if is_ip_literal(host) else host.count(".") + 1


def _sensitive(host: str, sensitive: dict[str, Any]) -> tuple[int, str] | None:
    """The most specific sensitive match: (depth, reason) or None."""
    best: tuple[int, str] | None = None
    domains: dict[str, str] = sensitive.get("domains", {})
    suffixes: dict[str, str] = sensitive.get("suffixes", {})
    labels: dict[str, str] = sensitive.get("labels", {})
    exact: dict[str, str] = sensitive.get("exact", {})
    if host in exact:
        return (_depth(host), f"sensitive:{exact[host]}:{host}")
    if is_ip_literal(host):
        try:
            ip = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return None
        if isinstance(ip, ipaddress.IPv6Address):
            ip = embedded_ipv4(ip) or ip  # judged as the IPv4 address it carries
        if ip.is_private or ip.is_loopback or ip.is_link_local:
            return (1, f"sensitive:local:{host}")
        return None
    parts = _parents(host)
    for cand in parts:
        if cand in domains:
            best = (_depth(cand), f"sensitive:{domains[cand]}:{cand}")
            break
    if best is None:
        for cand in parts[1:]:  # a suffix rule never matches the bare suffix itself
            if cand in suffixes:
                best = (_depth(cand), f"sensitive:{suffixes[cand]}:*.{cand}")
                break
    first = host.split(".", 1)[0]
    if first in labels and _depth(host) >= 3:
        cand_depth = _depth(host)
        if best is None or cand_depth > best[0]:
            best = (cand_depth, f"sensitive:{labels[first]}:{first}.*")
    return best


def resolve(host: str, snapshot: dict[str, Any]) -> Resolution:
    h = clean_host(host)
    default = snapshot.get("global_default", "collect")
    if not h:
        return Resolution(h, "off", "invalid-host")
    rules = {r["host"]: r["mode"] for r in snapshot.get("rules", [])}
    exact = {r["host"] for r in snapshot.get("rules", []) if r.get("exact")}
    mapped = mapped_ipv4_spelling(h)
    rule: tuple[int, str] | None = None
    for cand in [h, mapped] if mapped else _parents(h):
        if cand in rules and (cand == h or cand == mapped or cand not in exact):
            rule = (_depth(cand), cand)
            break
    sens = _sensitive(h, snapshot.get("sensitive", {}))
    if rule is not None and (sens is None or rule[0] >= sens[0]):
        return Resolution(h, rules[rule[1]], f"rule:{rule[1]}")
    if sens is not None:
        return Resolution(h, "off", sens[1])
    return Resolution(h, default, "default")
