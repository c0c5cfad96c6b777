"""What the load benchmark (bench/load.py) sends: the word list, the hosts with their site rules,
Zipf-like page URLs, the statuses each operation expects, and the large pages add_text and
add_url save (with the loopback page server add_url fetches them from)."""

from __future__ import annotations

import http.client
import http.server
import random
import sys
import threading
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

HTML_DIR = REPO.parent / "shared" / "reference" / "extraction" / "html"

WORDS = (
    "memory page source server local browser note capture search library document chunk extension "
    "policy resolver privacy network request answer python sqlite index query token origin host "
    "walnut river mountain garden coffee bicycle language history science music photograph winter "
    "summer recipe bread apple orange harbour station library theatre museum journey signal pattern "
    "the a of and to in is it that for on with as was at by an be this which from or have"
).split()

# (host, weight, mode set by the bench or None for the resolver's default)
HOSTS: list[tuple[str, float, str | None]] = [
    ("en.wikipedia.org", 14, None),
    ("github.com", 10, None),
    ("stackoverflow.com", 8, None),
    ("news.ycombinator.com", 6, None),
    ("docs.python.org", 6, None),
    ("developer.mozilla.org", 5, None),
    ("www.nytimes.com", 4, None),
    ("medium.com", 4, None),
    ("arxiv.org", 3, None),
    ("www.reddit.com", 5, None),
    ("blog.example.net", 2, "collect"),
    ("news.example.org", 3, "suggest"),
    ("intranet.corp.example", 2, "off"),
    ("www.chase.com", 1, None),
    ("accounts.google.com", 1, None),
    ("mail.example.com", 2, "off"),
]
CHAT_HOSTS = [
    ("chatgpt.com", "/c/"),
    ("claude.ai", "/chat/"),
    ("gemini.google.com", "/app/"),
    ("www.perplexity.ai", "/search/"),
]
RULES = {h: m for h, _, m in HOSTS if m} | {"pages.example.com": "collect", "127.0.0.1": "collect"}
COLLECT_HOSTS = [h for h, _, m in HOSTS if m in (None, "collect") and h not in ("www.chase.com", "accounts.google.com")]
OPS = {"page-probe": 0.45, "page-match": 0.25, "capture": 0.15, "note": 0.15}
EXPECTED = {
    "page-probe": (200,),
    "page-match": (200,),
    "capture": (200,),
    "note": (201,),
    "add_text": (200, 201),
    "add_url": (200, 201),
}


def words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def zipf_path(rng: random.Random) -> str:
    n = min(int(rng.paretovariate(1.1)), 5000)
    return rng.choice(
        [
            "/wiki/Page_{n}",
            "/topic/{n}",
            "/questions/{n}/how-to",
            "/a/b/{n}?id={n}&utm_source=x",
            "/posts/{n}/",
            "/article/{n}#section",
        ]
    ).format(n=n)


def page_url(rng: random.Random, hosts: list[tuple[str, float, str | None]] = HOSTS) -> str:
    host = rng.choices([h for h, _, _ in hosts], weights=[w for _, w, _ in hosts])[0]
    return f"https://{host}{zipf_path(rng)}"


class PageServer:
    """Serves the HTML pages for add_url on 127.0.0.1 (a thread; only the server fetches from it)."""

    def __init__(self, pages: dict[str, bytes]) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                body = pages.get(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path.lstrip("/")))
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def load_pages(limit: int) -> tuple[dict[str, bytes], str]:
    """Large real pages when ../shared/reference is here; generated large pages otherwise."""
    files = sorted(HTML_DIR.glob("*.html"), key=lambda p: -p.stat().st_size) if HTML_DIR.is_dir() else []
    if files:
        picked = files[:limit]
        return {f"page{i}.html": p.read_bytes() for i, p in enumerate(picked)}, f"{len(picked)} largest of {HTML_DIR}"
    rng = random.Random(7)
    pages = {}
    for i in range(limit):
        paras = "".join(f"<p>{words(rng, 40, 120)}.</p>" for _ in range(400))
        html = (
            f"<html><head><title>Generated page {i}</title></head><body><nav>{words(rng, 30, 30)}</nav>"
            f"<article><h1>Generated {i}</h1>{paras}</article><footer>{words(rng, 20, 20)}</footer></body></html>"
        )
        pages[f"page{i}.html"] = html.encode()
    return pages, f"{limit} generated pages"
