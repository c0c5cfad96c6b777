"""`wherefrom search` as a person runs it: a real subprocess asking a real server (the `api`
fixture's port and data dir); results with provenance in the panel's order; exit 1 when the
server cannot be reached."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from pathlib import Path

from server.settings import Settings
from testkit.server_process import free_port
from tests.conftest import Api

REPO = Path(__file__).resolve().parents[2]


async def wherefrom(settings: Settings, *args: str, port: int | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        *args,
        "--port",
        str(port or settings.port),
        "--data-dir",
        str(settings.data_dir),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def seed(api: Api) -> None:
    for path, body in [
        (
            "/api/notes",
            {
                "url": "https://recipes.example/soup",
                "title": "Tomato soup",
                "text": "Roast the tomatoes with garlic before blending the soup",
            },
        ),
        (
            "/api/clips",
            {
                "url": "https://garden.example/beds",
                "title": "Raised beds",
                "text": "Tomatoes want eight hours of sun; a tomato cage helps",
            },
        ),
        (
            "/api/library/add_text",
            {
                "url": "https://extension.example/guide",
                "title": "Growing tomatoes",
                "text": "A field guide to tomato varieties and staking.",
            },
        ),
    ]:
        assert (await api.post(path, body))[0] == 201


async def test_search_prints_results_with_provenance_in_the_panels_order(api: Api, settings: Settings) -> None:
    await seed(api)
    code, out, err = await wherefrom(settings, "search", "tomato")
    assert code == 0, err
    status, panel = await api.get("/api/search", params={"q": "tomato", "limit": 20})
    assert status == 200 and len(panel["results"]) == 3
    assert out.startswith('3 results for "tomato":')
    shown = [line.split()[0] for line in out.splitlines() if line.startswith("   http")]
    assert shown == [r["source_url"] for r in panel["results"]]
    assert "[note] Tomato soup — recipes.example, just now" in out
    assert "[clip] Raised beds — garden.example, just now" in out
    assert "[document] Growing tomatoes — extension.example, just now" in out


async def test_search_json_and_limit(api: Api, settings: Settings) -> None:
    await seed(api)
    code, out, err = await wherefrom(settings, "search", "tomato", "--limit", "2", "--json")
    assert code == 0, err
    got = json.loads(out)
    _, panel = await api.get("/api/search", params={"q": "tomato", "limit": 2})
    assert got["query"] == "tomato" and len(got["results"]) == 2
    assert [(r["url"], r["site"], r["kind"], r["title"]) for r in got["results"]] == [
        (r["source_url"], r["source_host"], r["kind"], r["title"]) for r in panel["results"]
    ]
    assert all(r["age"] == "just now" and r["snippet"] for r in got["results"])
    # an ISO date beside the age label, for scripts
    for r in got["results"]:
        assert dt.datetime.fromisoformat(r["date"].replace("Z", "+00:00")).year >= 2024, r


async def test_a_sentence_finds_what_one_word_does(api: Api, settings: Settings) -> None:
    await seed(api)
    code, out, _ = await wherefrom(settings, "search", "What did I write about roasting garlic?")
    assert code == 0 and "https://recipes.example/soup" in out
    code, out, _ = await wherefrom(settings, "search", "zzzqqq")
    assert code == 0 and out.strip() == 'No stored item matches "zzzqqq". Try fewer or other words.'


async def test_search_exits_1_when_the_server_is_unreachable(api: Api, settings: Settings) -> None:
    code, out, err = await wherefrom(settings, "search", "tomato", port=free_port())
    assert code == 1 and out == ""
    assert "no server on 127.0.0.1:" in err and "start it with: wherefrom serve" in err
    # a limit out of range is refused in the option's words before anything is sent: with no
    # server on the port, a request would have said "no server"
    code, out, err = await wherefrom(settings, "search", "tomato", "--limit", "500", port=free_port())
    assert code == 2 and out == "" and "no server" not in err, err
    assert "argument --limit: 500 is out of range: give 1 to 100" in err and "query.limit" not in err
    code, _, err = await wherefrom(settings, "search", "tomato", "--limit", "100")  # control: the top is taken
    assert code == 0, err
    code, out, _ = await wherefrom(settings, "search", "tomato")  # control: the same command reaches it
    assert code == 0 and out.startswith("No stored item matches")


async def test_a_search_nothing_could_judge_says_so(api: Api, settings: Settings) -> None:
    """A Dutch question none of the models that judge reads: its nearest items by meaning are
    shown as such, never as "no close match" (server.memory.ranking UNJUDGED), in text and JSON."""
    spring = "Het is weer lente: de natuur ontwaakt en je kunt de tuin klaarmaken voor de zomer."
    assert (await api.post("/api/notes", {"url": "https://nieuws.example/lente", "text": spring}))[0] == 201
    query = "hoe bouw je een zandkasteel dat niet instort"
    _, body = await api.get("/api/search", params={"q": query})
    assert body["results"] and body["judged"] is False  # the premise, from the server itself
    code, out, err = await wherefrom(settings, "search", query)
    assert code == 0, err
    assert out.startswith(f'For "{query}", {body["note"]}\n') and "no close match" not in out
    code, out, err = await wherefrom(settings, "search", query, "--json")
    got = json.loads(out)
    assert (got["close"], got["judged"], got["note"]) == (False, False, body["note"])
