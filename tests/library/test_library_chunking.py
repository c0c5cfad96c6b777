"""Document-mode chunking: one function decides; paragraph-aligned chunks of about 1,000-2,000
characters; long paragraphs split at sentences, then words, then grapheme boundaries; no
character (é, e + combining accent, CJK, emoji sequences, flags) is ever split."""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.library import chunking
from server.library.chunking import MAX_CHARS, MIN_CHARS, chunk_text, count_chunks, safe_boundary

SERVER = Path(__file__).resolve().parents[2] / "server"

GRAPHEMES = [
    "é",
    "e\u0301",
    "漢",
    "字",
    "👍",
    "👍🏽",
    "👩‍👩‍👧‍👦",
    "🇫🇷",
    "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "❤️",
    "a",
    "ك",
    "\u1100\u1161\u11a8",
    "z",
]


def flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def intact(chunks: list[str], graphemes: list[str]) -> None:
    """Each chunk starts and ends on a boundary: no grapheme from the list is cut in two."""
    for c in chunks:
        assert not unicodedata.combining(c[0]) and c[0] not in "\u200d\ufe0f" and not (0x1F3FB <= ord(c[0]) <= 0x1F3FF)
        assert c[-1] != "\u200d"
        assert not ("\U000e0020" <= c[0] <= "\U000e007f")
        assert not ("\u1160" <= c[0] <= "\u11ff")


def test_short_text_is_one_chunk() -> None:
    assert chunk_text("One paragraph.\nAnother.") == ["One paragraph.\nAnother."]
    assert chunk_text("") == [] and chunk_text(" \n\n ") == []


def test_paragraphs_are_packed_and_never_split_when_they_fit() -> None:
    paras = [f"Paragraph {i}. " + "word " * 60 for i in range(40)]  # ~310 chars each
    text = "\n".join(p.strip() for p in paras)
    chunks = chunk_text(text)
    assert len(chunks) > 3
    for c in chunks[:-1]:
        assert MIN_CHARS <= len(c) <= MAX_CHARS
    assert len(chunks[-1]) <= MAX_CHARS
    # each chunk is whole paragraphs
    for c in chunks:
        for line in c.split("\n"):
            assert line.startswith("Paragraph ")
    assert flat("".join(chunks)) == flat(text)


def test_a_long_paragraph_is_split_at_sentences() -> None:
    sentence = "This sentence is about forty-five chars long. "
    para = (sentence * 100).strip()  # ~4,600 characters, one paragraph
    chunks = chunk_text(para)
    assert len(chunks) == 3
    for c in chunks:
        assert len(c) <= MAX_CHARS and c.endswith("long.") and c.startswith("This")


def test_a_long_sentence_is_split_at_words() -> None:
    para = " ".join(["word"] * 1200)  # 5,999 characters, no sentence end
    chunks = chunk_text(para)
    assert all(len(c) <= MAX_CHARS for c in chunks)
    assert all(set(c.split()) == {"word"} for c in chunks)
    assert flat("".join(chunks)) == flat(para)


def test_a_short_chunk_is_filled_with_the_next_paragraphs_sentences() -> None:
    first = "Intro. " * 30  # ~210 chars
    second = "A sentence in the long second paragraph. " * 45  # ~1,845 chars: fits alone, not with the intro
    chunks = chunk_text(first.strip() + "\n" + second.strip())
    assert len(chunks[0]) >= MIN_CHARS


@pytest.mark.parametrize("g", GRAPHEMES)
@pytest.mark.parametrize("offset", range(-3, 4))
def test_no_character_is_split_around_a_hard_cut(g: str, offset: int) -> None:
    """A run without spaces (CJK, emoji) longer than MAX_CHARS, with the grapheme placed at every
    position around the cut."""
    filler = "漢" if g != "漢" else "字"
    pos = MAX_CHARS + offset - 1
    text = filler * pos + g + filler * (MAX_CHARS + 50)
    chunks = chunk_text(text)
    assert "".join(chunks) == text
    assert all(len(c) <= MAX_CHARS for c in chunks)
    assert sum(c.count(g) for c in chunks) == text.count(g)  # the grapheme survives whole
    intact(chunks, GRAPHEMES)


@pytest.mark.parametrize("g", GRAPHEMES)
def test_no_character_is_split_at_word_and_sentence_boundaries(g: str) -> None:
    words = [f"{g}w{i}{g}" for i in range(800)]
    sentences = " ".join(w + ("." if i % 7 == 6 else "") for i, w in enumerate(words))
    chunks = chunk_text(sentences)
    assert flat("".join(chunks)) == flat(sentences)
    assert sum(c.count(g) for c in chunks) == sentences.count(g)
    intact(chunks, GRAPHEMES)


def test_safe_boundary_steps_back_over_extenders() -> None:
    fam = "👩‍👩‍👧‍👦"
    text = "ab" + fam + "cd"
    for p in range(3, 2 + len(fam)):
        assert safe_boundary(text, p) == 2
    flags = "🇫🇷🇩🇪"
    assert safe_boundary(flags, 1, floor=0) == 0 and safe_boundary(flags, 3) == 2
    assert safe_boundary("e\u0301x", 1, floor=0) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*GRAPHEMES, " ", ". ", "\n", "。", "word", "x" * 50, "y" * 700]), max_size=600))
def test_property_nothing_lost_nothing_cut(parts: list[str]) -> None:
    text = "".join(parts)
    chunks = chunk_text(text)
    assert flat("".join(chunks)) == flat(text)
    assert all(0 < len(c) <= MAX_CHARS for c in chunks)
    # compare grapheme multiset: count each multi-code-point grapheme
    for g in GRAPHEMES:
        if len(g) > 1:
            assert sum(c.count(g) for c in chunks) == text.count(g)
    assert count_chunks(text) == len(chunks)


def test_one_owner_of_the_chunk_size_decision() -> None:
    """MIN_CHARS/MAX_CHARS are read only by chunking.py; every other module calls chunk_text or count_chunks."""
    for path in SERVER.rglob("*.py"):
        if path.name == "chunking.py":
            continue
        src = path.read_text("utf-8")
        tree = ast.parse(src)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.Attribute):
                name = node.id if isinstance(node, ast.Name) else node.attr
                assert name not in ("MIN_CHARS", "MAX_CHARS"), f"{path}: sizes chunks itself"
    pipeline = (SERVER / "library" / "pipeline.py").read_text("utf-8")
    assert "chunk_text(" in pipeline


def test_sizes_are_what_the_design_says() -> None:
    assert (chunking.MIN_CHARS, chunking.MAX_CHARS) == (1000, 2000)
