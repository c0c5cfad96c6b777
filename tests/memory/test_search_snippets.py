"""Search snippets: the matched words marked with private-use characters on the hit's own text
(never HTML), a window around the first match, for facts and library documents alike; and the
conversation answer's header (title, site, capture time) the side panel shows."""

from __future__ import annotations

from typing import Any

from server.memory.snippets import MARK_END, MARK_START, mark, matched_words, snippet
from tests.conftest import Api
from tests.memory.test_memory_pagematch import add_document, note

S, E = MARK_START, MARK_END


def marked(s: str) -> list[str]:
    """The marked words of a snippet."""
    out, rest = [], s
    while S in rest:
        rest = rest[rest.index(S) + 1 :]
        out.append(rest[: rest.index(E)])
    return out


async def search(api: Api, q: str) -> list[dict[str, Any]]:
    status, body = await api.get("/api/search", params={"q": q})
    assert status == 200, body
    return list(body["results"])


def test_matched_words_come_from_highlight_markers() -> None:
    assert matched_words(f"my {S}Dogs{E} name", f"{S}walnut tree{E}") == {"dogs", "walnut", "tree"}
    assert matched_words("nothing marked", "") == set()


def test_marks_go_on_the_original_text_possessives_included() -> None:
    assert mark("Alice's dog and alices cat", {"alices"}) == f"{S}Alice's{E} dog and {S}alices{E} cat"
    assert mark("no match here", {"walnut"}) == "no match here"
    # a marker already in the text is never taken for ours
    assert mark(f"{S}x{E} walnut", {"walnut"}) == f"x {S}walnut{E}"
    assert mark(f"{S}{E}", set()) == ""


def test_snippet_is_a_window_around_the_first_match_cut_at_spaces() -> None:
    text = "filler " * 100 + "the walnut lantern " + "tail " * 100
    s = snippet(text, {"walnut"})
    assert s.startswith("…") and s.endswith("…")
    assert marked(s) == ["walnut"]
    body = s.strip("…")
    assert len(body) <= 240 + 2
    assert body.replace(S, "").replace(E, "").split(" ")[0] in ("filler", "the"), "cut at a space"
    # short text: all of it, whitespace collapsed, no ellipsis
    assert snippet("a  walnut\n\nhere", {"walnut"}) == f"a {S}walnut{E} here"
    # no match: the beginning
    assert snippet("word " * 100, set()).startswith("word word")


async def test_search_results_carry_marked_snippets(api: Api) -> None:
    long = "Some preamble about nothing. " * 40 + "My dog's walking schedule is at dawn. " + "More after. " * 40
    await note(api, "https://a.example/dogs", long, title="Dog walking")
    [hit] = await search(api, "when do I walk the dog")
    assert "walking" in marked(hit["snippet"]) and "dog's" in marked(hit["snippet"]), hit["snippet"]
    assert hit["snippet"].startswith("…"), "the window moved to the match, past the 600-char text"
    assert "<" not in hit["snippet"] and "mark" not in hit["snippet"]
    assert marked(hit["title_marked"]) == ["Dog", "walking"]
    assert hit["text"].startswith("Some preamble"), "the text field is unchanged"


async def test_html_in_stored_text_stays_text_in_the_snippet(api: Api) -> None:
    await note(api, "https://a.example/x", "<img src=x onerror=alert(1)> walnut <b>bold</b>")
    [hit] = await search(api, "walnut")
    assert hit["snippet"] == f"<img src=x onerror=alert(1)> {S}walnut{E} <b>bold</b>"


async def test_document_hits_are_marked_from_their_best_chunk(api: Api) -> None:
    doc = await add_document(
        api,
        "https://docs.example/pecans",
        "Pecan orchards",
        "Orchards of pecans grow in Texas. " * 5 + "Harvest is in autumn.",
    )
    await note(api, "https://a.example/n", "nothing to do with it: harvest moon")
    hits = await search(api, "pecan harvest")
    [d] = [h for h in hits if h["kind"] == "document"]
    assert d["id"] == doc["id"]
    assert {"pecans", "Harvest"} <= set(marked(d["snippet"])), d["snippet"]
    assert marked(d["title_marked"]) == ["Pecan"]


async def test_conversation_answer_has_its_header(api: Api) -> None:
    url = "https://chatgpt.com/c/snip-1"
    status, _ = await api.get("/api/conversations", params={"url": url})
    empty = (await api.get("/api/conversations", params={"url": url}))[1]
    assert status == 200 and empty["turns"] == [] and empty["title"] is None and empty["captured_at"] is None
    status, _ = await api.post(
        "/api/captures",
        {
            "url": url,
            "title": "Dog names",
            "site": "chatgpt",
            "turns": [{"role": "user", "text": "Name my dog"}, {"role": "assistant", "text": "Biscuit"}],
        },
    )
    assert status == 200
    status, body = await api.get("/api/conversations", params={"url": url})
    assert status == 200
    assert (body["title"], body["site"], body["source_host"]) == ("Dog names", "chatgpt", "chatgpt.com")
    assert isinstance(body["captured_at"], float) and body["age"]["label"] == "just now"
    assert [t["role"] for t in body["turns"]] == ["user", "assistant"]
