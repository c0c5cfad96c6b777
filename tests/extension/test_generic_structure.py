"""The generic reader's structural rules for what is not message text, on small hand-written pages.

Each page imitates a layout seen on a real chat page (named in the test's docstring) with every
class name a meaningless hash, as after a redeploy; the reader is forced (captureMode "generic").
Each rule has a negative control: the same shape where the text is the message's and stays.
"""

from __future__ import annotations

from typing import Any

import pytest

from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture)
from tests.extension.test_generic_reader import read

pytestmark = pytest.mark.asyncio(loop_scope="module")


def pair(user: str, answer: str, after: str = "") -> str:
    """A thread of two bare rows: the prompt, then the answer (no attribute names a side)."""
    return (
        "<div class='q0'><div class='q1'><div class='q2'>"
        f"<div class='r0'><div class='u1'>{user}</div></div>"
        f"<div class='r0'><div class='a1'>{answer}</div>{after}</div>"
        "</div></div>"
    )


COMPOSER = (
    "<div class='c0'><div class='c1'><div contenteditable='true' role='textbox'><p><br></p></div>"
    "<div aria-hidden='true'><div class='c2'>Ask a follow-up</div></div><span class='c3'>Model</span></div></div>"
)
ANSWER = "<p>Here is the first paragraph of the answer.</p><ul><li>one point</li><li>another point</li></ul>"


async def test_the_composer_is_not_a_row(chromium: Any) -> None:
    """A text field with its placeholder beside the thread (a Perplexity thread, 2026-02) is the
    composer: the thread is the prompt and the answer, not the whole page with the composer as a row."""
    body = "<div class='p0'>" + pair("What is PSP?", ANSWER) + COMPOSER + "</div>"
    got = await read(chromium, body)
    assert got["turns"] == [
        ["user", "What is PSP?"],
        ["assistant", "Here is the first paragraph of the answer. one point another point"],
    ]


async def test_an_inline_button_inside_a_sentence_is_text(chromium: Any) -> None:
    """A prompt's link shown as a clickable span (role=button) amid the prompt's text (Perplexity's
    query, 2026-05) is part of the sentence; a span acting as a button on its own is a control."""
    user = (
        "<span class='s1'>Please include a <span role='button' tabindex='0' class='l1'>link to example.org</span>"
        " and a table.</span><div class='t1'><span role='button' class='x1'>Show more</span></div>"
    )
    got = await read(chromium, pair(user, ANSWER))
    assert got["turns"][0] == ["user", "Please include a link to example.org and a table."]


async def test_a_note_under_the_answer_is_not_text(chromium: Any) -> None:
    """A short line right after the box of a rendered answer ("Prepared using <model>", Perplexity
    2026-05) is the product's note; a plain message's own short line after plain text stays."""
    answer = f"<div class='b0'><div class='b1'>{ANSWER}</div></div><div class='n0'>Prepared using Some Model 4.6</div>"
    got = await read(chromium, pair("Summarise it", answer))
    assert got["turns"][1] == ["assistant", "Here is the first paragraph of the answer. one point another point"]
    plain = "<div class='b0'>Thanks, that works now.</div><div class='n0'>See you tomorrow</div>"
    got = await read(chromium, pair("Summarise it", plain))
    assert got["turns"][1] == ["assistant", "Thanks, that works now. See you tomorrow"]


def editor(lines: list[str], gutter: bool) -> str:
    numbers = "".join(f"<div><div class='g1'>{i + 1}</div></div>" for i in range(len(lines))) if gutter else ""
    body = "".join(f"<div class='v1'><span>{line}</span></div>" for line in lines)
    return (
        "<pre class='e0'><div class='h0'><div>elixir</div>"
        "<div class='h1'><span class='ic'>⧉</span></div></div>"
        "<div class='e1'><div role='code' class='e2'>"
        "<textarea role='textbox' aria-multiline='true' readonly></textarea>"
        f"<div class='m0' aria-hidden='true'>{numbers}</div>"
        f"<div class='e3' aria-hidden='true'>{body}</div></div></div></pre>"
    )


async def test_an_editors_line_numbers_are_not_code(chromium: Any) -> None:
    """A code block drawn by an editor (Monaco in Qwen, 2026-05): an empty input box, a gutter of
    line numbers 1..n in a box of its own, then the lines. The code is read, the language label and
    the gutter are not; lines that are numbers themselves stay code."""
    answer = "<p>Here you go:</p>" + editor(["# Hello", 'IO.puts("Hi")'], True) + "<p>Done.</p>"
    got = await read(chromium, pair("Write hello", answer))
    assert got["turns"][1] == ["assistant", 'Here you go: # Hello IO.puts("Hi") Done.']
    answer = "<p>It prints:</p>" + editor(["1", "2"], False) + "<p>Done.</p>"
    got = await read(chromium, pair("Count", answer))
    assert got["turns"][1] == ["assistant", "It prints: 1 2 Done."]


async def test_an_attachment_tile_is_not_text(chromium: Any) -> None:
    """A file tile above a prompt (ChatGPT, 2026-07): a box whose text starts with the name of the
    control covering it (aria-label = the file's name) and adds its type. The prompt stays."""
    tile = (
        "<div class='f0' role='group' aria-label='report 2026.pdf'><div class='f1'>"
        "<button type='button' aria-label='report 2026.pdf'></button></div>"
        "<div class='f2'><div class='f3'>report 2026.pdf</div><div class='f4'>PDF</div></div></div>"
    )
    user = tile + "<div class='f5'>Can you read this report?</div>"
    got = await read(chromium, pair(user, ANSWER))
    assert got["turns"][0] == ["user", "Can you read this report?"]


async def test_a_notice_under_the_action_bar_is_not_text(chromium: Any) -> None:
    """A product notice after a message's action bar ("To run code, enable …", Claude 2025-11):
    the bar of controls closes the message; a short line after it is not the answer."""
    bar = "<div class='k0'><button aria-label='Copy'>⧉</button><button aria-label='Retry'>↻</button></div>"
    notice = "<div class='w0'><svg></svg><p>To run code, enable code execution in Settings.</p></div>"
    answer = "<p>" + "The answer explains the whole method in detail. " * 3 + "</p>"
    got = await read(chromium, pair("How?", answer, bar + notice))
    assert got["turns"][1] == ["assistant", ("The answer explains the whole method in detail. " * 3).strip()]


async def test_a_title_bar_is_no_turn_of_the_other_side(chromium: Any) -> None:
    """A report panel (Gemini Deep Research, 2026-01): a title bar (a heading and controls) over
    the report that custom elements name as the model's. The title is no user turn; the report's
    own first heading, with a colon in it, is the report's text, not a speaker label."""
    body = (
        "<div class='d0'><div class='d1'><h2 class='d2'>Research report</h2>"
        "<button aria-label='Export'>Export</button></div>"
        "<div class='d3'><model-response class='d4'><h1>Deep Research design: structure and DOM</h1>"
        "<p>The structure of the report is described here in full.</p><p>A second paragraph.</p>"
        "</model-response></div></div>"
    )
    got = await read(chromium, body)
    assert got["turns"] == [
        [
            "assistant",
            "Deep Research design: structure and DOM "
            "The structure of the report is described here in full. A second paragraph.",
        ]
    ]


def share_row(key: int, inner: str) -> str:
    bar = "<div class='z0'><div role='button' class='z1' tabindex='0'><svg></svg></div></div>"
    return f"<div class='v{key % 2}' data-item-key='{key}'><div class='w0'>{inner}</div>{bar}</div>"


async def test_a_share_page_banner_and_a_lone_search_header(chromium: Any) -> None:
    """A share page (DeepSeek, 2026-07): a flat banner row ("generated by AI") over the thread, the
    word "you" inside an answer's sentence (no speaker label), short answers shaped like the
    prompts and one answer with a search header ("Read 12 web pages") and a tip under it. The
    banner is no turn, the sides alternate from the user, the header and the tip are not text."""
    long = "<p>" + "Kimi is a large model with many parameters and strong scores. " * 13 + "</p>"
    body = (
        "<div class='l0'><div class='l1'>"
        "<div class='v9' data-item-key='-999'><span class='i0'><svg></svg></span>"
        "<span>This shared conversation is generated by AI, for reference only.</span></div>"
        + share_row(1, "<div class='m0'>hii</div>")
        + share_row(2, "<div class='m1'><p><span>Hello! How can I help?</span></p></div>")
        + share_row(3, "<div class='m0'>how are you</div>")
        + share_row(4, "<div class='m1'><p><span>Fine. How about </span><span>you</span><span>?</span></p></div>")
        + share_row(5, "<div class='m0'>what about kimi</div>")
        + share_row(
            6,
            "<div class='s0'><div class='s1'><span>Read 12 web pages</span>"
            "<div class='s2'><img alt=''></div></div></div>"
            f"<div class='m1'>{long}<p>It is fast.</p></div>"
            "<div class='t0'>This response is AI-generated, for reference only.</div>"
            "<div class='t1'><span>12 web pages</span></div>",
        )
        + "</div></div>"
    )
    got = await read(chromium, body)
    assert got["turns"] == [
        ["user", "hii"],
        ["assistant", "Hello! How can I help?"],
        ["user", "how are you"],
        ["assistant", "Fine. How about you?"],
        ["user", "what about kimi"],
        ["assistant", (long[3:-4] + " It is fast.").replace("  ", " ").strip()],
    ]


def exchange(prompt: str, answer: str) -> str:
    """A row of a search-style thread: the prompt over its answer, in bare boxes."""
    return (
        "<div class='e0'><div class='e1'><div class='e2' role='tabpanel' data-state='active'><div class='e3'>"
        f"<div class='e4'><h1 class='e5'><span>{prompt}</span></h1></div>"
        f"<div class='e6'>{answer}</div></div></div></div></div>"
    )


async def test_a_thread_of_exchanges(chromium: Any) -> None:
    """A search-style thread (Perplexity 2026-02, NotebookLM 2026-04): every row holds a prompt over
    its answer. Each row's two parts are the turns; a row above the exchanges that is none (the
    notebook's summary, a date) is no turn."""
    body = (
        "<div class='t0'>"
        "<div class='n0'><div class='n1'>"
        "<p class='n2'>This notebook is about the personal software process.</p></div></div>"
        "<div class='n3'><span>Today • 14:40</span></div>"
        + exchange("Answer yes only.", "<div class='a0'><p>Yes.</p></div>")
        + exchange("Now answer no only.", "<div class='a0'><p>No.</p></div>")
        + exchange("Show a formula.", "<div class='a0'><p>Here: x = 1.</p><ul><li>one</li></ul></div>")
        + "</div>"
    )
    got = await read(chromium, body)
    assert got["turns"] == [
        ["user", "Answer yes only."],
        ["assistant", "Yes."],
        ["user", "Now answer no only."],
        ["assistant", "No."],
        ["user", "Show a formula."],
        ["assistant", "Here: x = 1. one"],
    ]


async def test_rows_with_a_stamp_are_no_exchanges(chromium: Any) -> None:
    """Negative control: rows forking into a message and its time stamp (not consecutive, the
    other rows without one) are one turn each, alternating from the user."""

    def stamped(text: str, stamp: str) -> str:
        bar = f"<div class='h7'><span class='q1'>{stamp}</span></div>" if stamp else ""
        return f"<div class='x9'><div class='k2'><div class='m3'>{text}</div>{bar}</div></div>"

    body = (
        "<div class='t1'>"
        + stamped("<p>hey there</p>", "16:49")
        + stamped("<p>Hi! How can I help?</p>", "")
        + stamped("<p>tell me a joke</p>", "17:01")
        + stamped("<p>Why did the chicken cross the road?</p>", "")
        + "</div>"
    )
    got = await read(chromium, body)
    assert [t[0] for t in got["turns"]] == ["user", "assistant", "user", "assistant"]
    assert got["turns"][0][1] == "hey there"


async def test_citations_sources_and_a_collapsed_panel_are_not_text(chromium: Any) -> None:
    """Inside an answer, by structure alone (DeepSeek 2026-07, Perplexity 2026-02, Gemini Deep
    Research 2026-01, after a redeploy renamed their classes): citation links reading a number (a
    dash before it drawn transparent), a chip naming a source with a count, a list of source links,
    a collapsed thinking panel (aria-hidden, transparent). A number in the sentence and a
    formula's drawing ending in "+1" stay."""
    cite = (
        "<a href='https://example.org/a' target='_blank'><span class='c0'>"
        "<span style='opacity:0'>-</span><span>1</span></span></a>"
    )
    chip = (
        "<span data-state='closed' class='h0'><span class='h1'><span>example</span>"
        "<span class='h2'>+1</span></span></span>"
    )
    sources = "".join(
        f"<div class='s1'><a href='https://{d}/' target='_blank'><span>{d}</span><span>Page on {d}</span></a></div>"
        for d in ("a.example", "b.example", "c.example")
    )
    answer = (
        f"<p>There are 3 models{cite}. They are fast{chip}.</p><p>Second paragraph.</p>"
        "<p>Sum: <span class='m0'><span aria-hidden='true'><span>x</span><span>+1</span></span></span></p>"
        f"<div class='s0'>{sources}</div>"
        "<div class='k0' aria-hidden='true' style='height:0px; opacity:0'><div>Thinking about models</div></div>"
    )
    got = await read(chromium, pair("Which models?", answer))
    assert got["turns"][1] == ["assistant", "There are 3 models. They are fast. Second paragraph. Sum: x+1"]
