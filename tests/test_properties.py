"""Property tests of the single deciders: URL normalisation, character caps, the FTS query
builder and the resolver."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.governance.resolver import MODES, clean_host, is_ip_literal, resolve
from server.searchtext import TOKENIZE, fts_queries, index_form
from server.textcaps import cap
from server.urls import BadUrl, normalise_url

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
# a name whose last label is a number is an IPv4 address to the WHATWG parser (`a.0` is refused)
tld = st.from_regex(r"[a-z]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
hosts = st.tuples(st.lists(label, max_size=4), tld).map(lambda p: ".".join([*p[0], p[1]]))
segment = st.from_regex(r"[A-Za-z0-9._~-]{1,8}", fullmatch=True)
paths = st.lists(segment, max_size=4).map(lambda p: "/" + "/".join(p))
# `.` and `..` are dot segments: every URL parser resolves them, so `/a/./b` is the page `/a/b`
plain_paths = st.lists(segment.filter(lambda s: s not in {".", ".."}), max_size=4).map(lambda p: "/" + "/".join(p))
params = st.dictionaries(
    st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.from_regex(r"[A-Za-z0-9]{0,6}", fullmatch=True), max_size=3
)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTPS"]))
    host = draw(hosts)
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    q = "&".join(f"{k}={v}" for k, v in draw(params).items())
    frag = draw(st.sampled_from(["", "#x", "#top"]))
    return f"{scheme}://{host}{port}{draw(paths)}{'?' + q if q else ''}{frag}"


@given(urls())
def test_normalise_is_idempotent(url: str) -> None:
    once = normalise_url(url)
    assert normalise_url(once) == once


@given(hosts, plain_paths, plain_paths)
def test_distinct_pages_stay_distinct(host: str, a: str, b: str) -> None:
    if a.rstrip("/") == b.rstrip("/"):
        return
    assert normalise_url(f"https://{host}{a}") != normalise_url(f"https://{host}{b}")


@pytest.mark.parametrize(
    ("path", "page"),
    [("/.", "/"), ("/a/./b", "/a/b"), ("/a/../b", "/b"), ("/..", "/"), ("/.a", "/.a"), ("/a..", "/a..")],
)
def test_dot_segments_resolve_and_dotted_names_do_not(path: str, page: str) -> None:
    assert normalise_url(f"https://example.org{path}") == f"https://example.org{page}"


@given(st.text(max_size=200))
def test_normalise_never_crashes(raw: str) -> None:
    try:
        out = normalise_url(raw)
    except BadUrl:
        return
    assert out.startswith(("http://", "https://"))


@given(st.text(max_size=60), st.integers(min_value=0, max_value=70), st.booleans())
def test_cap_is_a_character_safe_prefix(text: str, limit: int, ellipsis: bool) -> None:
    out = cap(text, limit, ellipsis=ellipsis)
    assert len(out) <= limit
    body = out[:-1] if ellipsis and out.endswith("…") and len(text) > limit else out
    assert text.startswith(body)
    out.encode("utf-8")  # never a lone surrogate from a split pair


_con = sqlite3.connect(":memory:")
_con.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
_con.execute("INSERT INTO t(body) VALUES (?)", (index_form("my dog's name is Rex"),))


@settings(max_examples=300)
@given(st.text(max_size=120))
def test_fts_queries_never_a_syntax_error(text: str) -> None:
    for q in fts_queries(text):
        _con.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,)).fetchall()


def test_fts_operators_are_words() -> None:
    for text in ["NEAR(a b)", "body:dog", '"unbalanced', "a AND OR NOT b", "(x", "dog*", "^dog", "a - b"]:
        for q in fts_queries(text):
            _con.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,)).fetchall()


def test_possessive_found_by_plain_words() -> None:
    hits = [r for q in fts_queries("dogs name") for r in _con.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,))]
    assert hits


@given(
    st.lists(label, min_size=1, max_size=4).map(".".join),
    st.lists(st.tuples(st.lists(label, min_size=1, max_size=3).map(".".join), st.sampled_from(MODES)), max_size=4),
)
def test_resolver_total_and_rule_reason_is_a_parent(host: str, rules: list[tuple[str, str]]) -> None:
    snap = {"global_default": "collect", "rules": [{"host": h, "mode": m} for h, m in rules], "sensitive": {}}
    res = resolve(host, snap)
    assert res.mode in MODES
    if res.reason.startswith("rule:"):
        parent = res.reason[5:]
        assert res.host == parent or res.host.endswith("." + parent)
    elif is_ip_literal(res.host) and res.reason.startswith("sensitive:local:"):
        assert res.mode == "off"  # a private/loopback address is off unless a rule names it exactly
    elif res.reason == "invalid-host":
        assert res.mode == "off" and clean_host(host) == ""  # e.g. `a.0`: WHATWG reads an IPv4 and refuses it
    else:
        assert res.reason == "default"
        h0 = clean_host(host)
        if is_ip_literal(h0):  # an IP literal matches rules only exactly, never by labels
            assert not any(h0 == h for h, _ in rules)
        else:
            assert not any(h0 == h or h0.endswith("." + h) for h, _ in rules)
