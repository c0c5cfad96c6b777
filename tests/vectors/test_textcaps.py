"""Caps count characters and never split one: é (one code point and e + combining acute),
CJK, 4-byte emoji, at every position around every cap."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from server.textcaps import ELLIPSIS, cap

SAMPLES = [
    "aé漢🧪e\u0301x🧪🧪漢字e\u0301\u0301b",
    "🧪" * 12,
    "e\u0301" * 8,
    "漢字かな" * 4,
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",  # ZWJ sequence: code points stay whole
    "a" * 20,
]


def _whole(prefix: str, text: str) -> None:
    assert text.startswith(prefix)
    rest = text[len(prefix) :]
    assert not rest or not unicodedata.combining(rest[0]), "a combining mark was cut from its base"
    assert not (prefix and "\ud800" <= prefix[-1] <= "\udbff"), "a lone high surrogate was left"
    prefix.encode("utf-8")  # encodable: no lone surrogate anywhere


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("limit", range(0, 22))
def test_cap_is_a_whole_character_prefix_within_the_limit(text: str, limit: int) -> None:
    out = cap(text, limit)
    assert len(out) <= limit
    _whole(out, text)
    if len(text) <= limit:
        assert out == text


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("limit", range(1, 22))
def test_cap_with_ellipsis(text: str, limit: int) -> None:
    out = cap(text, limit, ellipsis=True)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
    else:
        assert out.endswith(ELLIPSIS)
        _whole(out[:-1], text)


def test_utf16_surrogate_pairs_are_not_split() -> None:
    # text that arrived as UTF-16 code units (surrogatepass), e.g. from a JS string
    pair = "🧪".encode("utf-16-le").decode("utf-16-le", "surrogatepass")
    raw = "ab" + "".join(chr(u) for u in (0xD83E, 0xDDEA)) + "c"
    assert len(pair) == 1
    for limit in range(0, 6):
        out = cap(raw, limit)
        assert not (out and "\ud800" <= out[-1] <= "\udbff")
        assert len(out) <= limit


def test_caps_are_characters_not_bytes() -> None:
    assert cap("🧪" * 5, 3) == "🧪" * 3  # 12 bytes, 3 characters
    assert cap("漢" * 5, 5) == "漢" * 5


def test_negative_limit_is_an_error() -> None:
    with pytest.raises(ValueError):
        cap("x", -1)


_CAP_CASES = json.loads((Path(__file__).resolve().parents[2] / "fixtures" / "cap-cases.json").read_text("utf-8"))[
    "cases"
]


@pytest.mark.parametrize("case", _CAP_CASES, ids=[c["name"] for c in _CAP_CASES])
def test_shared_cap_case(case: dict) -> None:
    assert cap(case["text"], case["limit"], ellipsis=case["ellipsis"]) == case["expect"]


_MD_CASES = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "markdown-cap-cases.json").read_text("utf-8")
)["cases"]


@pytest.mark.parametrize("case", _MD_CASES, ids=[c["name"] for c in _MD_CASES])
def test_markdown_cap_vectors(case: dict[str, object]) -> None:
    from server.textcaps import cap_markdown, open_fence

    got = cap_markdown(str(case["text"]), int(str(case["limit"])))
    assert got == case["expect"]
    assert len(got) <= int(str(case["limit"]))
    assert open_fence(got) is None or open_fence(str(case["text"])) is not None


def test_markdown_cap_never_leaves_a_fence_open() -> None:
    from server.textcaps import cap_markdown, open_fence

    md = "intro\n\n```py\ndef f():\n    return 1\n```\n\n~~~\nx\n~~~\n\nafter"
    assert open_fence(md) is None
    for limit in range(len(md) + 1):
        got = cap_markdown(md, limit)
        assert len(got) <= limit and open_fence(got) is None, (limit, got)
    assert open_fence("```\nopen") == "```"  # the check can fail
