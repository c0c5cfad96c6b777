"""Extraction: trafilatura's text and metadata, the canonical URL and language from the head,
the BeautifulSoup fallback, and the work kept off the event loop."""

from __future__ import annotations

import os

import pytest

from server.library import extract as extract_mod
from server.library.extract import extract, extract_html, fallback_text

PAGE = """<!doctype html>
<html lang="de-AT"><head>
<title>Quitten im Garten | Obstblog</title>
<link rel="canonical" href="/quitten">
<meta property="og:site_name" content="Obstblog">
<meta name="author" content="Grete Huber">
<meta property="article:published_time" content="2024-05-03T10:00:00Z">
</head><body>
<nav><a href="/">Start</a> <a href="/kontakt">Kontakt</a></nav>
<article><h1>Quitten im Garten</h1>
<p>Die Quitte ist eine alte Kulturpflanze, die in vielen Gärten wieder angebaut wird und im Herbst reift.</p>
<p>Ihre Früchte sind roh kaum essbar, aber gekocht ergeben sie Gelee, Mus und Brot von besonderem Duft.</p>
<table><tr><th>Sorte</th><th>Reife</th></tr><tr><td>Konstantinopeler</td><td>Oktober</td></tr></table>
</article>
<div class="comments"><p>Kommentar: Toller Artikel, danke!</p></div>
<footer>Impressum Datenschutz</footer>
</body></html>"""


def test_text_and_metadata() -> None:
    got = extract_html(PAGE, "https://obst.example/amp/quitten?x=1")
    assert got.extractor == "trafilatura"
    assert "Die Quitte ist eine alte Kulturpflanze" in got.text
    assert "Konstantinopeler" in got.text  # tables included
    assert "Kontakt" not in got.text and "Impressum" not in got.text
    assert "Toller Artikel" not in got.text  # comments excluded
    assert got.title == "Quitten im Garten | Obstblog" or got.title == "Quitten im Garten"
    assert got.author == "Grete Huber" and got.sitename == "Obstblog" and got.date == "2024-05-03"
    assert got.language == "de-AT"
    assert got.canonical_url == "https://obst.example/quitten"  # made absolute, not normalised


def test_no_canonical_means_none_not_the_given_url() -> None:
    page = PAGE.replace('<link rel="canonical" href="/quitten">', "")
    assert extract_html(page, "https://obst.example/q").canonical_url is None


def test_og_url_is_a_canonical_too() -> None:
    page = PAGE.replace(
        '<link rel="canonical" href="/quitten">', '<meta property="og:url" content="https://obst.example/og">'
    )
    assert extract_html(page, "https://obst.example/q").canonical_url == "https://obst.example/og"


def test_fallback_strips_navigation_and_prefers_main() -> None:
    html = (
        "<html><head><title>F</title><style>p{}</style></head><body><header>Logo</header><nav>Menu</nav>"
        "<aside>Ads</aside><main><p>One</p><script>var x</script><p>Two</p></main><footer>Foot</footer></body></html>"
    )
    title, text = fallback_text(html)
    assert (title, text) == ("F", "One\nTwo")
    title, text = fallback_text("<html><body><nav>Menu</nav><article><p>Only the article</p></article></body></html>")
    assert text == "Only the article"
    title, text = fallback_text("<html><body><nav>Menu</nav><div>Body text</div></body></html>")
    assert text == "Body text"


def test_fallback_is_used_when_trafilatura_returns_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extract_mod.trafilatura, "bare_extraction", lambda *a, **k: None)
    got = extract_html(PAGE, "https://obst.example/q")
    assert got.extractor == "fallback" and "Die Quitte" in got.text and "Kontakt" not in got.text
    assert got.author == "Grete Huber"  # metadata still comes from the page


async def test_extraction_runs_in_a_worker_process() -> None:
    """Off the event loop and off this process's GIL: the pool that ran it has child processes."""
    got = await extract(PAGE, "https://obst.example/q")
    assert "Quitte" in got.text
    pool = extract_mod._POOL
    assert pool is not None
    workers = set(pool._processes)  # pids of the pool's processes
    assert workers and os.getpid() not in workers
