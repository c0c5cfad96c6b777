"""Property tests of lexical search, through a real server: any run of two or more characters of an
unspaced script (Han, kana) inside a stored sentence finds it; any single edit of a word of five
or more letters that no item holds and that is not a word of the language finds the item holding
the word; no text makes search fail.
The FTS query builder keeps its rules for every text (operators are words, possessives fold)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from server import appkeys
from server.meaning.model import whole_word
from server.memory.search import hits
from server.searchtext import TOKENIZE, fts_queries, index_form, term_match
from testkit.live_server import LiveServer
from testkit.server_process import free_port

# kanji, hiragana, katakana (the prolonged sound mark too), as Japanese and Chinese text mixes them
unspaced_char = st.one_of(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
    st.characters(min_codepoint=0x3041, max_codepoint=0x3096),
    st.characters(min_codepoint=0x30A1, max_codepoint=0x30FC),
)
unspaced_run = st.text(unspaced_char, min_size=2, max_size=24)
word = st.from_regex(r"[a-z]{5,12}", fullmatch=True)
OPS = ("insert", "delete", "substitute", "transpose")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path_factory.mktemp("searchprops"), free_port()).start()
    yield server
    server.stop()


_n = iter(range(10**9))


def add_note(live: LiveServer, text: str) -> str:
    url = f"https://props.example/{next(_n)}"
    status, body = live.request("POST", "/api/notes", json.dumps({"url": url, "text": text}).encode(), _JSON)
    assert status == 201, body
    return url


def found(live: LiveServer, q: str) -> list[str]:
    status, body = live.request("GET", "/api/search?" + urlencode({"q": q, "limit": 100}))
    assert status == 200, body
    return [r["source_url"] for r in body["results"]]


_JSON = {"Content-Type": "application/json"}


@SETTINGS
@given(unspaced_run, st.data())
def test_any_unspaced_substring_finds_its_sentence(live: LiveServer, run: str, data: st.DataObject) -> None:
    url = add_note(live, f"メモ: {run}。")
    start = data.draw(st.integers(0, len(run) - 2), label="start")
    end = data.draw(st.integers(start + 2, len(run)), label="end")
    assert url in found(live, run[start:end])


@SETTINGS
@given(word, st.sampled_from(OPS), st.data())
def test_one_edit_of_a_word_finds_its_item(live: LiveServer, w: str, op: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(w) - (2 if op == "transpose" else 1)), label="at")
    c = data.draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), label="letter")
    typo = {
        "insert": w[:i] + c + w[i:],
        "delete": w[:i] + w[i + 1 :],
        "substitute": w[:i] + c + w[i + 1 :],
        "transpose": w[:i] + w[i + 1 : i + 2] + w[i : i + 1] + w[i + 2 :],
    }[op]
    assume(typo != w)
    url = add_note(live, f"a note that mentions {w} once")
    assume(not held(live, typo))  # a word some item holds as typed is a word of the store, not a typo
    assume(not whole_word(typo))  # nor is a word of the language (server.memory.typos)
    assert url in found(live, typo)
    assert url in found(live, f"{typo} mentions")  # beside another word (an explicit AND of the spellings)


def held(live: LiveServer, typo: str) -> bool:
    """Does some item hold the word as typed (its indexed form)?"""
    assert live.app is not None
    store = live.app[appkeys.STORE]
    return bool(live.run(hits(store, term_match(typo), 1)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_no_text_makes_search_fail(live: LiveServer, text: str) -> None:
    if text.strip() and "\x00" not in text:
        add_note(live, text)
    status, body = live.request("GET", "/api/search?" + urlencode({"q": text or "x"}))
    assert status in (200, 400), body


_con = sqlite3.connect(":memory:")
_con.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")


@settings(max_examples=300)
@given(st.text(max_size=60), st.text(max_size=60))
def test_indexed_form_and_queries_never_a_syntax_error(stored: str, asked: str) -> None:
    _con.execute("INSERT INTO t(body) VALUES (?)", (index_form(stored),))
    for q in fts_queries(asked) + fts_queries(stored):
        _con.execute("SELECT rowid FROM t WHERE t MATCH ?", (q,)).fetchall()


@settings(max_examples=100)
@given(unspaced_run, st.sampled_from(["AND", "OR", "NOT", "NEAR", '"', "*", "(", "body:"]))
def test_operators_beside_unspaced_words_are_words(run: str, op: str) -> None:
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{TOKENIZE}')")
    con.execute("INSERT INTO t(body) VALUES (?)", (index_form(f"{run} {op} Alice's {op}{run}"),))
    for q in (f"{run} {op}", f"{op}{run}", f"alices {run}", f"Alice’s {run}"):
        rows = [r for m in fts_queries(q)[:1] for r in con.execute("SELECT rowid FROM t WHERE t MATCH ?", (m,))]
        assert rows, q
