"""`wherefrom import-chats` as a person runs it: a real subprocess against a real server, on the
real ChatGPT export (skipped cleanly when ../shared/reference is absent) and on Claude samples
built here from the documented shape."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from server.dataio import chats, titles
from server.settings import Settings
from tests.conftest import REFERENCE, Api
from tests.memory.test_memory_writes import set_mode

REPO = Path(__file__).resolve().parents[2]
CHATGPT = REFERENCE / "exports" / "chatgpt-2023" / "conversations.json"
needs_chatgpt = pytest.mark.skipif(not CHATGPT.exists(), reason="no ../shared/reference/exports/chatgpt-2023")


async def wherefrom(settings: Settings, *args: str) -> tuple[int, str, str]:
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
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    return proc.returncode or 0, out.decode(), err.decode()


async def counts(api: Api) -> dict[str, int]:
    out = {}
    for table in ("facts", "conversations", "documents", "activity"):
        row = await api.store.fetchone(f"SELECT COUNT(*) FROM {table}")  # noqa: S608
        assert row is not None
        out[table] = row[0]
    return out


def claude_sample() -> list[dict[str, Any]]:
    """The shape of Anthropic's export (conversations.json), two conversations."""
    return [
        {
            "uuid": "0b6c2f0e-1111-4a6e-9d7a-2f1e0c9a0001",
            "name": "Quince jelly",
            "created_at": "2024-03-02T09:15:00Z",
            "updated_at": "2024-03-02T09:20:00Z",
            "chat_messages": [
                {
                    "uuid": "m-1",
                    "sender": "human",
                    "text": "How long do quinces take to set?",
                    "content": [{"type": "text", "text": "How long do quinces take to set?"}],
                    "created_at": "2024-03-02T09:15:00.123456Z",
                    "attachments": [],
                    "files": [],
                },
                {
                    "uuid": "m-2",
                    "sender": "assistant",
                    "text": "",
                    "content": [
                        {"type": "thinking", "thinking": "..."},
                        {"type": "text", "text": "About 40 minutes of a rolling boil."},
                    ],
                    "created_at": "2024-03-02T09:15:30+00:00",
                    "attachments": [],
                    "files": [],
                },
            ],
        },
        {
            "uuid": "0b6c2f0e-2222-4a6e-9d7a-2f1e0c9a0002",
            "name": "Day-dated",
            "created_at": "2023-11-20",
            "chat_messages": [
                {
                    "uuid": "d-1",
                    "sender": "human",
                    "text": "A message dated by day only",
                    "created_at": "2023-11-20",
                    "attachments": [{"file_name": "notes.txt", "extracted_content": "x"}],
                },
                {"uuid": "d-2", "sender": "assistant", "text": "And its reply", "created_at": "2023-11-20"},
            ],
        },
    ]


@needs_chatgpt
def test_the_real_chatgpt_export_reads_as_its_readme_counts() -> None:
    parsed = chats.read_file(CHATGPT)
    turns = [t for c in parsed.conversations for t in c["turns"] if t["shown"]]
    assert len(parsed.conversations) == 192
    # the file holds 1,560 messages: 1,298 turns shown, 2 other versions of a turn, 260 skipped
    assert len(turns) == 1298
    assert parsed.messages == 1300 and parsed.other_versions == 2
    assert parsed.messages + sum(parsed.skipped.values()) == 1560
    assert sum(t["role"] == "user" for t in turns) == 645
    assert sum(t["role"] == "assistant" for t in turns) == 653
    days = {dt.datetime.fromtimestamp(t["valid_at"], dt.UTC).date() for t in turns}
    assert (len(days), min(days), max(days)) == (56, dt.date(2023, 3, 28), dt.date(2023, 6, 9))
    by_id = {t["native_id"]: t for c in parsed.conversations for t in c["turns"]}
    # the model's browsing calls (`code` to the browser) are tool calls, not assistant prose
    assert "443ee693-8ed4-4da4-b40c-393c16caba16" not in by_id
    assert not any(t["text"].lstrip("`\n").startswith(("open_url(", "search(", "quote(")) for t in by_id.values())
    assert parsed.skipped["tool call (browser)"] == 29
    assert parsed.skipped["tool call (show_me.get_MermaidRoute)"] == 1
    # system and tool messages are counted by type, on every branch
    assert parsed.skipped["system message (text)"] == 192
    assert parsed.skipped["tool message (tether_browsing_display)"] == 20
    assert parsed.skipped["tool message (tether_quote)"] == 14
    assert parsed.skipped["tool message (system_error)"] == 2
    # untitled chats ("New chat") take their first question as title, cut by the cap rule
    assert not any(c["title"] == "New chat" for c in parsed.conversations)
    assert all(len(c["title"]) <= titles.TITLE_FROM_QUESTION_CHARS for c in parsed.conversations if c["title"])


@needs_chatgpt
async def test_import_the_real_export_with_its_own_dates_then_again_adds_nothing(api: Api, settings: Settings) -> None:
    code, out, err = await wherefrom(settings, "import-chats", str(CHATGPT))
    assert code == 0, err
    assert "192 new" in out and "1298 added" in out and "2 other versions kept" in out, out
    rows = await api.store.fetchall(
        "SELECT valid_at, granularity, created_at, native_id FROM facts WHERE kind = 'turn'"
    )
    assert len(rows) == 1300
    newest = max(r["valid_at"] for r in rows)
    assert newest < dt.datetime(2023, 6, 10, tzinfo=dt.UTC).timestamp()  # never the import time
    assert all(r["granularity"] == "instant" and r["native_id"] for r in rows)
    conv = await api.store.fetchone("SELECT MAX(created_at) FROM conversations")
    assert conv is not None and conv[0] < dt.datetime(2023, 6, 13, tzinfo=dt.UTC).timestamp()
    # one page of it: From this page shows it, the icon would be green
    first = json.loads(CHATGPT.read_text("utf-8"))[0]
    status, probe = await api.get("/api/page-probe", params={"url": f"https://chatgpt.com/c/{first['id']}"})
    assert status == 200 and probe["green"] is True
    _, activity = await api.get("/api/activity")
    assert [r["kind"] for r in activity["activity"]].count("import") == 1
    before = await counts(api)
    code, out, err = await wherefrom(settings, "import-chats", str(CHATGPT))
    assert code == 0, err
    assert "0 added" in out and "1300 already there" in out, out
    after = await counts(api)
    assert after == {**before, "activity": before["activity"] + 1}  # a second import, its own row


async def test_claude_export_and_its_zip_keep_their_dates_and_granularity(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    sample = tmp_path / "conversations.json"
    sample.write_text(json.dumps(claude_sample()), "utf-8")
    code, out, err = await wherefrom(settings, "import-chats", str(sample))
    assert code == 0, err
    assert "2 new" in out and "4 added" in out and "1 attachment" in out and "1 thinking block" in out, out
    rows = await api.store.fetchall(
        "SELECT f.text, f.valid_at, f.granularity, f.native_id, c.source_url FROM facts f "
        "JOIN conversations c ON c.id = f.conversation_id ORDER BY f.id"
    )
    got = {r["native_id"]: r for r in rows}
    assert got["m-2"]["text"] == "About 40 minutes of a rolling boil."
    assert got["m-1"]["valid_at"] == pytest.approx(dt.datetime(2024, 3, 2, 9, 15, 0, 123456, tzinfo=dt.UTC).timestamp())
    assert got["m-1"]["granularity"] == "instant" and got["d-1"]["granularity"] == "day"
    assert dt.datetime.fromtimestamp(got["d-1"]["valid_at"]).date() == dt.date(2023, 11, 20)
    assert got["m-1"]["source_url"] == "https://claude.ai/chat/0b6c2f0e-1111-4a6e-9d7a-2f1e0c9a0001"
    _, match = await api.get("/api/page-match", params={"url": got["d-1"]["source_url"]})
    assert {f["age"]["granularity"] for f in match["tiers"]["exact"]} == {"day"}
    # a newer export as the service's .zip, with one more message: only that one is added
    newer = claude_sample()
    newer[0]["chat_messages"].append(
        {"uuid": "m-3", "sender": "human", "text": "And for medlars?", "created_at": "2024-03-03T10:00:00Z"}
    )
    archive = tmp_path / "data-2024-03-04.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", json.dumps(newer))
        zf.writestr("users.json", "[]")
    code, out, err = await wherefrom(settings, "import-chats", str(archive))
    assert code == 0, err
    assert "1 added" in out and "4 already there" in out, out
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE kind = 'turn'")
    assert row is not None and row[0] == 5


@pytest.mark.parametrize("mode", ["off", "suggest"])
async def test_conversations_of_a_site_not_collecting_are_not_imported_and_counted(
    api: Api, settings: Settings, tmp_path: Path, mode: str
) -> None:
    await set_mode(api, "claude.ai", mode)
    sample = tmp_path / "conversations.json"
    sample.write_text(json.dumps(claude_sample()), "utf-8")
    code, out, err = await wherefrom(settings, "import-chats", str(sample))
    assert code == 0, err
    assert f"not imported (site mode): 2 {mode}" in out, out
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts")
    assert row is not None and row[0] == 0
    # positive control: the same file imports once the site collects
    await set_mode(api, "claude.ai", "collect")
    code, out, err = await wherefrom(settings, "import-chats", str(sample))
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts")
    assert code == 0 and row is not None and row[0] == 4


@pytest.mark.parametrize(
    "content,needle",
    [
        ('[{"uuid": "x", "name": "t", "chat_messages": [\n  {"uuid": 1}\n]}]', "[0].chat_messages[0].uuid"),
        (
            '[{"uuid": "x", "chat_messages": '
            '[{"uuid": "a", "sender": "human", "text": "hi", "created_at": "yesterday"}]}]',
            "[0].chat_messages[0].created_at",
        ),
        (
            '[{"id": "g", "current_node": "r", "mapping": {"r": {"id": "r", "parent": null, "message": {"id": "m", '
            '"author": {"role": "user"}, "create_time": 1, "content": {"content_type": "text", "parts": ["hi"]}}}}}, '
            '{"id": "c", "mapping": {"n1": {"id": "n1", "parent": "n0", "message": null}}, "current_node": "n1"}]',
            "[1].mapping['n0']",
        ),
        ('[\n{"uuid": "x",\n "chat_messages": [}\n]', "line 3"),
        (
            '{"format": "wherefrom-export", "version": 1, "conversations": [], "facts": [{"kind": "note"}], '
            '"documents": []}',
            "$.facts[0].url",
        ),
    ],
)
async def test_a_malformed_file_exits_1_naming_the_place_and_writes_nothing(
    api: Api, settings: Settings, tmp_path: Path, content: str, needle: str
) -> None:
    good = claude_sample()
    bad = tmp_path / "conversations.json"
    # the broken conversation comes after good ones: nothing of the file may be stored
    if content.startswith('[{"uuid"'):
        content = json.dumps(good)[:-1] + ", " + content[1:]
        needle = needle.replace("[0]", "[2]", 1)
    bad.write_text(content, "utf-8")
    before = await counts(api)
    code, out, err = await wherefrom(settings, "import-chats", str(bad))
    assert code == 1 and needle in err and "nothing was imported" in err, err
    assert await counts(api) == before


def _conv(**kw: Any) -> dict[str, Any]:
    turn = {"role": "user", "text": "hello", "native_id": "n1", "valid_at": 1_700_000_000, "granularity": "instant"}
    return {"url": "https://claude.ai/chat/route-test", "site": "claude", "title": "t", "turns": [{**turn, **kw}]}


async def test_the_import_route_refuses_bad_batches_and_writes_nothing(api: Api) -> None:
    from tests.memory.test_memory_writes import snapshot

    base = {"import_id": "i1", "source": "claude"}
    before = await snapshot(api)
    for body, code, field in [
        ({**base, "conversations": [_conv(text=" \n ")]}, "bad_value", "body.conversations[0].turns[0].text"),
        (
            {**base, "conversations": [_conv(granularity="week")]},
            "bad_value",
            "body.conversations[0].turns[0].granularity",
        ),
        ({**base, "conversations": [_conv(extra=1)]}, "unknown_field", "body.conversations[0].turns[0].extra"),
        ({**base, "conversations": [{**_conv(), "url": "javascript:alert(1)"}]}, "bad_url", None),
        ({**base, "source": "bard"}, "bad_value", "body.source"),
        ({"source": "claude"}, "missing_field", "body.import_id"),
    ]:
        status, answer = await api.post("/api/import", body)
        assert status == 400 and answer["error"]["code"] == code, answer
        if field:
            assert answer["error"]["field"] == field
    assert await snapshot(api) == before
    # positive control: the same batch, well formed, is stored with its own time
    status, answer = await api.post("/api/import", {**base, "conversations": [_conv()]})
    assert status == 200 and answer["turns"]["added"] == 1, answer
    row = await api.store.fetchone("SELECT valid_at FROM facts")
    assert row is not None and row[0] == 1_700_000_000


async def test_an_import_in_many_batches_is_one_activity_row_and_keeps_long_conversations_in_order(
    api: Api, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from server.commands import import_chats
    from server.commands.client import Client, Progress

    convs = [
        {
            "uuid": f"c-{n}",
            "name": f"Chat {n}",
            "created_at": "2024-01-01T00:00:00Z",
            "chat_messages": [
                {
                    "uuid": f"c-{n}-m-{k}",
                    "sender": "human" if k % 2 == 0 else "assistant",
                    "text": f"message {k} of chat {n} " + "x" * 200,
                    "created_at": f"2024-01-01T00:{k // 60:02d}:{k % 60:02d}Z",
                }
                for k in range(3 if n else 120)
            ],
        }
        for n in range(30)
    ]
    parsed = chats.parse(convs)
    monkeypatch.setattr(import_chats, "BATCH_CONVERSATIONS", 7)
    monkeypatch.setattr(import_chats, "BATCH_BYTES", 4000)  # chat 0 (120 messages) goes in pieces
    assert len(list(import_chats.batches(parsed))) > 10
    client = Client(settings.port, settings.data_dir, timeout=import_chats.TIMEOUT)
    stream = io.StringIO()
    monkeypatch.setattr(Progress, "__init__", _progress_into(Progress.__init__, stream))
    totals = await asyncio.to_thread(import_chats.run, client, parsed)
    assert totals["turns.added"] == 120 + 29 * 3 and totals["conversations.new"] == 30
    _, activity = await api.get("/api/activity", params={"limit": 500})
    rows = [r for r in activity["activity"] if r["kind"] == "import"]
    assert len(rows) == 1 and "30 conversations, 207 new messages" in rows[0]["summary"], rows
    _, conv = await api.get("/api/conversations", params={"url": "https://claude.ai/chat/c-0"})
    assert [t["text"].split(" ")[1] for t in conv["turns"]] == [str(k) for k in range(120)]
    assert stream.getvalue().splitlines()[-1] == "importing: 30/30 items"  # plain lines when not a terminal


def _progress_into(init: Any, stream: Any) -> Any:
    def patched(self: Any, label: str, total: int | None, unit: str, stream_arg: Any = None) -> None:
        init(self, label, total, unit, stream)

    return patched


def test_the_progress_bar_is_drawn_on_a_terminal() -> None:
    import io

    from server.commands.client import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    p = Progress("importing", 4, "items", out)
    p.update(1, final=True)
    p.update(4)
    p.finish()
    assert "\rimporting [███████░░░░░░░░░░░░░░░░░░░░░░░] 1/4 items" in out.getvalue()
    assert out.getvalue().endswith("\rimporting [██████████████████████████████] 4/4 items\n")


async def test_an_unreachable_server_sends_nothing_and_exits_1(settings: Settings, tmp_path: Path) -> None:
    settings.data_dir.mkdir(parents=True)
    (settings.data_dir / "token").write_text("x" * 43)
    sample = tmp_path / "conversations.json"
    sample.write_text(json.dumps(claude_sample()), "utf-8")
    code, out, err = await wherefrom(settings, "import-chats", str(sample))
    assert code == 1 and "no server on 127.0.0.1:" in err, err


def _placed(url: str, turns: list[tuple[int, str, str, str, bool]]) -> dict[str, Any]:
    return {
        "url": url,
        "site": "chatgpt",
        "title": "Quince’s jelly",
        "created_at": 1_690_000_000,
        "turns": [
            {
                "role": role,
                "text": text,
                "native_id": nid,
                "valid_at": 1_700_000_000 + k,
                "granularity": "instant",
                "position": pos,
                "shown": shown,
                "markdown": f"**{text}**",
            }
            for k, (pos, role, nid, text, shown) in enumerate(turns)
        ],
    }


async def test_a_batch_of_new_conversations_stores_what_one_conversation_per_batch_stores(api: Api) -> None:
    """The batch writer (new conversations' rows together) against the same conversations sent
    one per batch: the same rows, the same counts; a conversation twice in one batch is matched
    against its first part, not duplicated; every turn is in the words index at once."""
    first = [(0, "user", "a", "how do I set quince jelly", True), (1, "assistant", "b", "boil the pips", True)]
    again = [
        *first,
        (1, "assistant", "c", "use the cores' pectin", True),  # a regenerated reply: shown now
        (1, "assistant", "b", "boil the pips", False),
        (2, "user", "d", "and the sugar?", True),
    ]
    other = [(0, "user", "x", "東京で quinces", True), (0, "user", "y", "another version", False)]

    def batch(prefix: str) -> list[dict[str, Any]]:
        return [
            _placed(f"https://chatgpt.com/c/{prefix}-1", first),
            _placed(f"https://chatgpt.com/c/{prefix}-2", other),
        ]

    together = [*batch("together"), _placed("https://chatgpt.com/c/together-1", again)]
    status, answer = await api.post("/api/import", {"import_id": "t", "source": "chatgpt", "conversations": together})
    assert status == 200, answer
    singles = [*batch("single"), _placed("https://chatgpt.com/c/single-1", again)]
    totals: dict[str, int] = {}
    for n, conv in enumerate(singles):
        status, one = await api.post(
            "/api/import", {"import_id": f"s{n}", "source": "chatgpt", "conversations": [conv]}
        )
        assert status == 200, one
        for group in ("conversations", "turns"):
            for key, v in one[group].items():
                totals[f"{group}.{key}"] = totals.get(f"{group}.{key}", 0) + v
    assert {f"{g}.{k}": v for g in ("conversations", "turns") for k, v in answer[g].items()} == totals
    assert answer["conversations"] == {"new": 2, "updated": 1, "unchanged": 0}

    async def rows(prefix: str) -> list[tuple[Any, ...]]:
        got = await api.store.fetchall(
            "SELECT replace(f.source_url, ?, '') AS page, f.kind, f.title, f.text, f.source_host, f.source_ref, "
            "f.valid_at, f.granularity, f.position, f.role, f.native_id, f.search_title, f.search_text, f.markdown, "
            "f.via, f.shown, c.source_ref, c.created_at FROM facts f JOIN conversations c ON c.id = f.conversation_id "
            "WHERE f.source_url LIKE ? ORDER BY page, f.position, f.valid_at, f.id",
            (prefix, prefix + "%"),
        )
        return [tuple(r) for r in got]

    stored = await rows("https://chatgpt.com/c/together")
    assert stored == await rows("https://chatgpt.com/c/single")
    assert len(stored) == 6 and [r[3] for r in stored if r[0] == "-1" and r[15]] == [
        "how do I set quince jelly",
        "use the cores' pectin",
        "and the sugar?",
    ]
    for match, n in (("body: (pectin OR 東京)", 4), ("title: quinces", 12)):  # both ways: 2 turns; every title
        row = await api.store.fetchone("SELECT COUNT(*) FROM facts_fts WHERE facts_fts MATCH ?", (match,))
        assert row is not None and row[0] == n, match
    await api.store.conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
