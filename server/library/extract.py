"""Readable text, its Markdown and metadata from a page's HTML.

trafilatura first (comments excluded, tables included, with its metadata: title, author,
date, site name). Its one extraction pass gives both the text (what search indexes) and the
Markdown of the same tree (headings, lists, tables, code, quotes), which the reader shows. Links
are put back from the page afterwards (server.library.links, conservatively): asking trafilatura
to keep them changes what it extracts (the text of 31 of the 150 reference pages differs), and
the search text must not change. Emphasis is not kept. When it
returns nothing, a BeautifulSoup fallback over <main>, <article> or <body> with navigation,
headers, footers, asides, scripts and styles removed. The
page's declared canonical URL and language are read from its <head>.

`extract_html` is CPU-bound: call it through `extract`, which runs it in a worker PROCESS —
a thread would still hold the GIL for long stretches of parsing and stall the event loop
(measured by bench/load.py) — never on the event loop.

Bounded in time: one page gets TIME_LIMIT_SECONDS of a worker, counted from when a worker is
free for it (at most one page per worker is handed to the pool, so a page never waits inside it).
A page that runs over has its worker killed and replaced (any other page in the same pool is
retried once on the new one) and is refused 422 `extract_timeout`: the queue moves on. A tree
with more than FAST_TREE_ELEMENTS elements skips trafilatura's comparison with jusText, whose
neighbour search is quadratic in the number of short paragraphs (1 MB of tiny tables: minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import logging
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup
from lxml.html import HtmlElement

from server.library.codelangs import add_code_languages, page_code_languages
from server.library.links import add_links, page_anchors

with warnings.catch_warnings():
    # trafilatura imports urllib3's SOCKS support for its downloader (which we do not use);
    # without PySocks that import warns, and the test suite turns warnings into errors
    warnings.simplefilter("ignore")
    import trafilatura
    from htmldate import find_date
    from trafilatura.metadata import (
        examine_meta,
        extract_meta_json,
        extract_sitename,
        extract_title,
    )
    from trafilatura.utils import load_html
    from trafilatura.xml import xmltotxt

from server.errors import UnprocessableContent

log = logging.getLogger("wherefrom.library")

TIME_LIMIT_SECONDS = 30.0  # one page's extraction; more and its worker is replaced
FAST_TREE_ELEMENTS = 5_000  # real pages measured: under 3,000 elements (shared reference pages)

# extraction is CPU work in its own process(es), leaving a core to the event loop; started on
# first use with "spawn" (no fork of a process that runs threads)
_WORKERS = max(1, min(2, (os.cpu_count() or 2) - 1))
_POOL: ProcessPoolExecutor | None = None


def _pool() -> ProcessPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ProcessPoolExecutor(
            max_workers=_WORKERS,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=die_with_parent,
            initargs=(os.getpid(),),
        )
    return _POOL


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """A worker's initializer: the worker ends when the server that started it dies, even by
    SIGKILL (no orphaned workers, and so no orphaned resource tracker, whose pipe they hold).
    Linux: the kernel's parent-death signal (armed by the thread that started the worker: the
    event loop's); elsewhere: a thread watching the parent's pid."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before the signal was armed
                    os._exit(0)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


FALLBACK_CONTAINERS = ("main", "article", "body")
FALLBACK_STRIP = ("nav", "header", "footer", "aside", "script", "style", "noscript", "template", "svg", "form")
_BLOCK_SPACE = re.compile(r"[ \t\r\f\v\u00a0]+")

_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")  # else bs4 warns that XHTML "looks like XML"
_LANG_CODE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")


@dataclasses.dataclass(frozen=True)
class Meta:
    title: str | None = None
    author: str | None = None
    date: str | None = None
    sitename: str | None = None
    language: str | None = None
    canonical_url: str | None = None


@dataclasses.dataclass(frozen=True)
class Extracted(Meta):
    """The page's metadata with its readable text."""

    text: str = ""
    extractor: str = "trafilatura"  # 'trafilatura' | 'fallback' | 'text'
    markdown: str | None = None  # the page's structure as Markdown (trafilatura only)


class ExtractionTimeout(UnprocessableContent):
    code = "extract_timeout"


_SLOTS: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None


def _slots(loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
    """One slot per worker: a page enters the pool only when a worker is free for it."""
    global _SLOTS
    if _SLOTS is None or _SLOTS[0] is not loop:
        _SLOTS = (loop, asyncio.Semaphore(_WORKERS))
    return _SLOTS[1]


async def _started_pool() -> ProcessPoolExecutor:
    """The pool, its workers started: a new pool's start-up (spawning, importing the
    extractors: seconds) is not counted against the page that happens to need it first."""
    fresh = _POOL is None
    pool = _pool()
    if fresh:
        await asyncio.wrap_future(pool.submit(os.getpid))
    return pool


def _replace(pool: ProcessPoolExecutor) -> None:
    """Kill `pool`'s workers (a page that runs over cannot be interrupted any other way) and let
    the next call start a fresh pool."""
    global _POOL
    if _POOL is pool:
        _POOL = None
    for proc in list(pool._processes.values()):
        with contextlib.suppress(OSError, ValueError):
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)


async def extract(html: str, url: str) -> Extracted:
    """`extract_html` off the event loop, in at most TIME_LIMIT_SECONDS of a worker."""
    loop = asyncio.get_running_loop()
    async with _slots(loop):
        for attempt in range(2):
            pool = await _started_pool()
            try:
                future = pool.submit(extract_html, html, url)
                async with asyncio.timeout(TIME_LIMIT_SECONDS):
                    return await asyncio.wrap_future(future)
            except TimeoutError:
                log.warning("extraction of %s ran over %.0f s; its worker was replaced", url, TIME_LIMIT_SECONDS)
                _replace(pool)
                raise ExtractionTimeout(
                    f"the page took longer than {TIME_LIMIT_SECONDS:g} s to read; nothing was saved",
                    limit_seconds=TIME_LIMIT_SECONDS,
                ) from None
            except BrokenProcessPool:
                # a worker died (killed, or replaced for another page): start a new pool once
                _replace(pool)
                if attempt:
                    raise
    raise AssertionError("unreachable")


def extract_html(html: str, url: str, *, markdown: bool = True) -> Extracted:
    """Readable text, Markdown and metadata of `html` fetched from (or posted for) `url`
    (`markdown=False`: without the Markdown, the benchmark's same-run baseline)."""
    tree = None
    md: str | None = None
    try:
        tree = load_html(html)
    except Exception:  # noqa: BLE001 - an unparsable page is the fallback's job
        log.debug("cannot parse %s", url, exc_info=True)
    meta = Meta()
    text = ""
    if tree is not None:
        meta = page_metadata(tree, url)
        anchors = page_anchors(tree, url) if markdown else []  # before extraction changes the tree
        languages = page_code_languages(tree) if markdown else {}
        fast = sum(1 for _ in tree.iter()) > FAST_TREE_ELEMENTS
        try:
            doc = trafilatura.bare_extraction(tree, url=url, fast=fast, include_comments=False, include_tables=True)
        except Exception:  # noqa: BLE001 - a failure on one page is the fallback's job
            log.debug("trafilatura failed on %s", url, exc_info=True)
            doc = None
        text = tidy(getattr(doc, "text", None) or "")
        body = getattr(doc, "body", None)
        if markdown and text and body is not None:
            md = page_markdown(body, url)
            md = add_code_languages(add_links(md, anchors, url), languages) if md else md
    extractor = "trafilatura"
    if not text:
        md = None
        title, text = fallback_text(html)
        meta = dataclasses.replace(meta, title=meta.title or title)
        extractor = "fallback"
    return Extracted(text=text, extractor=extractor, markdown=md, **dataclasses.asdict(meta))


def page_markdown(body: HtmlElement, url: str) -> str | None:
    """trafilatura's Markdown of its extracted tree (formatting on: # headings, - lists, | tables,
    ``` code); None when it fails or holds nothing."""
    try:
        md = xmltotxt(body, True)
    except Exception:  # noqa: BLE001 - the text still counts without its Markdown
        log.debug("markdown failed on %s", url, exc_info=True)
        return None
    md = md.strip()
    return md or None


def page_metadata(tree: HtmlElement, url: str) -> Meta:
    """trafilatura's metadata extraction, limited to what the library keeps.

    trafilatura.extract_metadata also computes categories, tags and a licence, loads a TLD
    table for the host name, and looks for an author in the page body (a deep copy and a
    pruning pass: about a third of a page's extraction time, measured with
    bench/bench_extraction.py). This keeps its order and its rules for the rest: meta tags,
    then JSON-LD, then the page's own title and site name, and htmldate for the date. The
    author comes from meta tags and JSON-LD only.
    """
    try:
        m = examine_meta(tree)
        if m.author and " " not in m.author:  # trafilatura's own rule: one word is rarely a name
            m.author = None
        try:
            m = extract_meta_json(tree, m)
        except Exception:  # noqa: BLE001 - trafilatura guards this call the same way
            log.debug("JSON-LD metadata failed on %s", url, exc_info=True)
        title = m.title or extract_title(tree)
        author = m.author
        sitename = m.sitename or extract_sitename(tree)
        if sitename:
            sitename = sitename.lstrip("@")
        date = find_date(tree, url=url, extensive_search=False, original_date=True)
    except Exception:  # noqa: BLE001 - metadata is a bonus; the text still counts
        log.debug("metadata failed on %s", url, exc_info=True)
        title = author = sitename = date = None
    return Meta(
        title=_clean(title),
        author=_clean(author),
        date=_clean(date),
        sitename=_clean(sitename),
        language=page_language(tree),
        canonical_url=canonical_url(tree, url),
    )


def canonical_url(tree: HtmlElement, url: str) -> str | None:
    """The page's declared canonical URL (link rel=canonical, else og:url), made absolute."""
    href = None
    for link in tree.iterfind(".//head//link[@rel]"):
        if "canonical" in (link.get("rel") or "").lower().split():
            href = link.get("href")
            break
    if not href:
        og = tree.find('.//head//meta[@property="og:url"]')
        href = og.get("content") if og is not None else None
    if not href or not href.strip():
        return None
    absolute = urljoin(url, href.strip())
    return absolute if urlsplit(absolute).scheme in ("http", "https") else None


def page_language(tree: HtmlElement) -> str | None:
    """<html lang>, else <meta http-equiv=content-language>, as a language tag."""
    root = tree.getroottree().getroot()
    candidates = [root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")]
    for meta in tree.iterfind(".//head//meta[@http-equiv]"):
        if (meta.get("http-equiv") or "").lower() == "content-language":
            candidates.append((meta.get("content") or "").split(",")[0])
    for value in candidates:
        value = (value or "").strip().replace("_", "-")
        if _LANG_CODE.match(value):
            return value
    return None


def fallback_text(html: str) -> tuple[str | None, str]:
    """(title, text) from <main>, else <article>, else <body>, without navigation and scripts."""
    soup = BeautifulSoup(_XML_DECL.sub("", html, count=1), "lxml")
    title = _clean(soup.title.get_text(" ")) if soup.title else None
    for tag in soup.find_all(FALLBACK_STRIP):
        tag.decompose()
    container = None
    for name in FALLBACK_CONTAINERS:
        container = soup.find(name)
        if container is not None and container.get_text(strip=True):
            break
    if container is None:
        container = soup
    return title, tidy(container.get_text("\n"))


def tidy(text: str) -> str:
    """One paragraph a line: runs of spaces folded, lines stripped, blank lines dropped."""
    lines = (_BLOCK_SPACE.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _clean(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None
