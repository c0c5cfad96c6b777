"""The generic conversation reader (extension/content/generic*.js) on small pages it has never seen.

In headless Chromium, the content scripts are injected in files.json order into a page written
here (no site's markup: every class name is a meaningless hash, as after a redeploy) and the
reader is forced (captureMode "generic": X.detect(..., {generic: true})). Asserted: the turns,
their order, roles and text, from structure alone — repeated sibling rows, speaker labels in any
language, author-role attributes among attribute noise — without the chrome a reader does not see
as message text; and a wrong choice of thread is never silent (lost_text against the thread it chose).
"""

from __future__ import annotations

from typing import Any

import pytest

from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture)
from testkit.extractor_kit import inject, new_page

pytestmark = pytest.mark.asyncio(loop_scope="module")

# a registered host, so the content scripts have a site; the reader is forced, so no layout of it runs
URL = "https://claude.ai/chat/0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"

READ = """() => {
  const ns = window.Wherefrom, X = ns.extractor;
  const site = X.siteFor(location.href);
  const found = X.detect(document, site, {generic: true});
  const miss = ns.coverage.settledMiss(document, site, found, found.turns, {generic: true});
  return {reader: found.layout && found.layout.id, turns: found.turns.map(t => [t.role, t.text]),
          kind: miss && miss.kind};
}"""


async def read(chromium: Any, body: str) -> dict[str, Any]:
    html = f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"
    page = await new_page(chromium, html=html, url=URL)
    try:
        await inject(page, skip=("content/capture.js",))
        return dict(await page.evaluate(READ))
    finally:
        await page.context.close()


def row(text: str, stamp: str = "") -> str:
    bar = f"<div class='h7'><span class='q1'>{stamp}</span><button aria-label='Copy'>⧉</button></div>" if stamp else ""
    return f"<div data-render-count='1' class='x9'><div class='k2'><div class='m3'>{text}</div>{bar}</div></div>"


async def test_rows_without_any_role_signal(chromium: Any) -> None:
    """No attribute, tag or label names a side: the thread is the container of same-shaped rows
    (not the page's outer boxes, not the disclaimer), sides alternate from the user, and a time
    stamp beside a message's controls is not message text."""
    body = (
        "<div class='a1'><div class='b2'>"
        + row("<p>hey</p>", "16:49")
        + row("<p>Hi Tochi! How can I help you today?</p>")
        + row("<p>hii</p>", "17:01")
        + row("<p>Hey! What's on your mind?</p>")
        + "</div><div class='c3'><p>The assistant can make mistakes.</p></div></div>"
    )
    got = await read(chromium, body)
    assert got["reader"] == "generic"
    assert got["turns"] == [
        ["user", "hey"],
        ["assistant", "Hi Tochi! How can I help you today?"],
        ["user", "hii"],
        ["assistant", "Hey! What's on your mind?"],
    ]


async def test_speaker_labels_by_structure_in_any_language(chromium: Any) -> None:
    """Speaker headings are not message text: one ending in a colon in a language no pattern
    knows, and one holding "X responded:" with the message after it; a drawing's
    `gradientUnits="userSpaceOnUse"` names no side, nor does the letter i of a formula."""
    body = (
        "<div class='t0'>"
        "<section class='s1' data-turn='user'><h4 class='z8'>나의 말:</h4>"
        "<div data-message-author-role='user' class='u2'>"
        "<div class='w3'>질문입니다 e<math><mi>i</mi></math></div></div></section>"
        "<section class='s1' data-turn='assistant'><h4 class='z8'>ChatGPT의 말:</h4>"
        "<svg><linearGradient gradientUnits='userSpaceOnUse'></linearGradient></svg>"
        "<div data-message-author-role='assistant' class='u2'>"
        "<div class='w4'><p>답변입니다.</p><p>두 번째 문단.</p></div></div></section>"
        "</div>"
        "<div class='t9'>"
        "<div class='r1'><h2 class='y5'>You said: Tell me a joke</h2>"
        "<div class='v6'><p>Tell me a joke</p></div></div>"
        "<div class='r1'><h2 class='y5'>Claude responded: Why did the chicken</h2>"
        "<div class='v7'><p>Why did the chicken cross the road?</p></div></div>"
        "</div>"
    )
    got = await read(chromium, body)
    assert got["turns"][:2] == [["user", "질문입니다 e i"], ["assistant", "답변입니다. 두 번째 문단."]]
    # a second page's layout: labelled by its headings only
    got = await read(chromium, "<div class='t9'>" + body.split("<div class='t9'>")[1])
    assert got["turns"] == [["user", "Tell me a joke"], ["assistant", "Why did the chicken cross the road?"]]


async def test_chrome_inside_a_message_is_left_out(chromium: Any) -> None:
    """Inside a message, by structure alone: a code block's header (its language, with no <pre>:
    an editor's text box), a formula's accessible copy beside its drawing, a citation chip (a
    link inside a preview trigger), a reasoning-time line beside the body, a status announcement."""
    answer = (
        "<div class='n1'>Thought for 37 seconds</div>"
        "<div class='n2'>"
        "<p>Printing in Elixir goes through the IO module, which writes to standard output; the"
        " function returns the atom ok once the text is written, so it chains well. Use this"
        "<span data-state='closed'><span class='c1'><a href='https://example.org/' target='_blank'>"
        "<span>Example</span><span>+1</span></a></span></span></p>"
        "<div class='cb'><div class='hd'><span>elixir</span><button>Copy</button></div>"
        "<div role='textbox' aria-multiline='true' contenteditable='false'><div>IO.puts(1)</div></div></div>"
        "<p>Euler: <span class='k1'><span class='k2'><math><mi>e</mi></math></span>"
        "<span class='k3' aria-hidden='true'>e</span></span></p>"
        "<span role='status'>Answer finished</span>"
        "</div>"
    )
    body = (
        "<div class='t0'>"
        "<div data-turn-role='User' class='r'><div class='m'>How do I print?</div></div>"
        f"<div data-turn-role='Model' class='r'><div class='m'>{answer}</div></div>"
        "</div>"
    )
    got = await read(chromium, body)
    assert got["turns"] == [
        ["user", "How do I print?"],
        [
            "assistant",
            "Printing in Elixir goes through the IO module, which writes to standard output; the "
            "function returns the atom ok once the text is written, so it chains well. Use this IO.puts(1) Euler: e",
        ],
    ]


async def test_a_wrong_thread_is_never_silent(chromium: Any) -> None:
    """A document beside the rows in the thread that no row holds (a canvas, a report): the
    generic capture covers little of its thread and records lost_text, not only the generic note.
    Positive control: the same thread without the document records only the generic note."""
    rows = row("<p>Write the report</p>") + row("<p>Here it is.</p>")
    report = (
        "<section class='doc'><h3>Survey</h3>"
        + f"<p>{'Findings and figures of the survey. ' * 8}</p>" * 6
        + "</section>"
    )
    got = await read(chromium, f"<main class='mm'><div class='t0'>{rows}{report}</div></main>")
    assert got["kind"] == "lost_text", got
    got = await read(chromium, f"<main class='mm'><div class='t0'>{rows}</div></main>")
    assert got["turns"] == [["user", "Write the report"], ["assistant", "Here it is."]]
    assert got["kind"] == "generic_reader", got
