"""`wherefrom add` and `wherefrom import` as a person runs them: a real subprocess talking to a
real server (the `api` fixture's port and data dir), a summary, and the exit status."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from server.commands.add import read_url_list
from server.settings import Settings
from tests.conftest import Api, free_port, local_site

REPO = Path(__file__).resolve().parents[2]
PAGE = (
    "<html><head><title>Quinces</title></head><body><article>"
    + "".join(
        f"<p>Quince paragraph {i}: orchards, jelly and the long history of the fruit in Persian gardens.</p>"
        for i in range(30)
    )
    + "</article></body></html>"
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", port=free_port(), allow_private_fetch=True)


@pytest.fixture
async def site(api: Api) -> AsyncIterator[str]:
    assert (await api.put("/api/site-mode", {"host": "127.0.0.1", "mode": "collect"}))[0] == 200

    async def page(request: web.Request) -> web.Response:
        if request.path.startswith("/ok"):
            return web.Response(text=PAGE, content_type="text/html")
        if request.path == "/pdf":
            return web.Response(body=b"%PDF", content_type="application/pdf")
        return web.Response(status=404, text="missing")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    async with local_site(app) as base:
        yield base


async def wherefrom(settings: Settings, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        *args,
        "--port",
        str(settings.port),
        "--data-dir",
        str(settings.data_dir),
        cwd=REPO,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), 120)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_add_reports_saved_already_saved_and_failed(api: Api, settings: Settings, site: str) -> None:
    code, out, err = await wherefrom(
        settings, "add", f"{site}/ok", f"{site}/ok#again", f"{site}/gone", f"{site}/pdf", "ftp://example.com/x"
    )
    assert code == 1
    assert "saved 1, already saved 1, failed 3" in out
    assert f"failed {site}/gone: HTTP 502 upstream" in out and "404" in out
    assert f"failed {site}/pdf: HTTP 422 not_html" in out
    assert "failed ftp://example.com/x: HTTP 400 bad_url" in out
    assert "[1/5]" in err and "[5/5]" in err  # progress on stderr
    rows = await api.store.fetchall("SELECT source_url FROM documents")
    assert [r[0] for r in rows] == [f"{site}/ok"]


async def test_import_reads_one_url_a_line(api: Api, settings: Settings, site: str, tmp_path: Path) -> None:
    listing = tmp_path / "urls.txt"
    listing.write_text(f"# reading list\n\n{site}/ok1\n   {site}/ok2  \n# {site}/skipped\n{site}/ok1/\n", "utf-8")
    code, out, err = await wherefrom(settings, "import", str(listing))
    assert (code, out.splitlines()[0]) == (0, "saved 2, already saved 1, failed 0"), (out, err)
    code, out, _ = await wherefrom(settings, "import", "-", stdin=f"{site}/ok3\n".encode())
    assert (code, out.strip()) == (0, "saved 1, already saved 0, failed 0")
    assert (await api.store.fetchall("SELECT COUNT(*) FROM documents"))[0][0] == 3


async def test_a_server_that_is_not_running_fails_clearly(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "nodata", port=free_port())
    code, _out, err = await wherefrom(settings, "add", "https://example.com/")
    assert code == 1 and "no token" in err
    settings.data_dir.mkdir()
    (settings.data_dir / "token").write_text("x" * 43)
    code, out, _err = await wherefrom(settings, "add", "https://example.com/a", "https://example.com/b")
    assert code == 1 and "failed 2" in out and "not reachable at http://127.0.0.1:" in out


def test_read_url_list() -> None:
    assert read_url_list(["# c", "", "  https://a/  ", "https://b", "   # indented comment"]) == [
        "https://a/",
        "https://b",
    ]
