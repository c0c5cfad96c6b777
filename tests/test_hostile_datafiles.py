"""Hostile data files and times: a file is checked whole at the edge (the import route's own
checks on every item: no NaN or Infinity, times from 1970 to 9999, URLs, empty text) before
anything is sent; a zip member is inflated as a stream with a cap; deep nesting and encrypted
zips are one line and exit 1, never a traceback; and a far-future time already in a store
cannot break a read (ages and date formatting never raise)."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from server import ages
from server.dataio import chats, markdown
from server.memory.facts import insert_fact
from server.provenance import stamp
from server.settings import Settings
from tests.conftest import Api, skip_unless_optional
from tests.dataio.test_dataio_import import claude_sample, counts, wherefrom

FAR = 1e18  # a far-future day-granular time (year ~31.7 billion)


async def stored_far_future_note(api: Api) -> None:
    """What an older build's import let in: a note with valid_at 1e18, day-granular."""
    async with api.store.transaction() as conn:
        await insert_fact(
            conn,
            stamp("https://example.com/far", "Far"),
            kind="note",
            title="Far",
            text="zeppelin timetable",
            valid_at=FAR,
            granularity="day",
            now=time.time(),
        )


async def test_a_far_future_time_in_the_store_does_not_break_search_related_or_export(api: Api) -> None:
    await stored_far_future_note(api)
    status, body = await api.get("/api/search", params={"q": "zeppelin"})
    assert status == 200, body
    assert [r["text"] for r in body["results"]] == ["zeppelin timetable"]  # positive control: it is found
    assert body["results"][0]["age"]["label"] == ages.UNKNOWN
    status, body = await api.get("/api/page-match", params={"url": "https://example.com/other"})
    assert status == 200, body
    status, body = await api.get("/api/page-match", params={"url": "https://example.com/far"})
    assert status == 200, body
    status, page = await api.get("/api/export", params={"kind": "facts"})
    assert status == 200, page
    items = page["items"]
    path, text = markdown.page_notes(items[0]["url"], items)
    assert "zeppelin timetable" in text


@pytest.mark.parametrize("value", [FAR, -1.0, float("nan"), float("inf"), 1e308, 10**400])
def test_ages_and_dates_never_raise(value: Any) -> None:
    for gran in (ages.DAY, ages.INSTANT):
        assert ages.age(value, gran)["label"] == ages.UNKNOWN
        assert ages.iso(value, gran) is None
    assert ages.age(1_700_000_000, ages.DAY, now=1_700_000_000)["label"] == "today"  # control


def _batch(valid_at: Any) -> str:
    turn = f'{{"role": "user", "text": "hello", "native_id": "n1", "valid_at": {valid_at}, "granularity": "day"}}'
    conv = f'{{"url": "https://claude.ai/chat/t", "site": "claude", "title": "t", "turns": [{turn}]}}'
    return f'{{"import_id": "i1", "source": "claude", "conversations": [{conv}]}}'


@pytest.mark.parametrize(
    ("valid_at", "code"), [("1e18", "bad_value"), ("-5", "bad_value"), ("NaN", "bad_json"), ("Infinity", "bad_json")]
)
async def test_the_import_route_refuses_times_out_of_range_and_non_json_numbers(
    api: Api, valid_at: str, code: str
) -> None:
    status, body = await api.call(
        "POST", "/api/import", data=_batch(valid_at), headers={"Content-Type": "application/json"}
    )
    assert status == 400 and body["error"]["code"] == code, body
    assert (await counts(api))["conversations"] == 0
    status, body = await api.call(  # positive control: the same batch with a real time is stored
        "POST", "/api/import", data=_batch("1700000000"), headers={"Content-Type": "application/json"}
    )
    assert status == 200, body
    assert (await counts(api))["conversations"] == 1


def _claude_with_last(**msg: Any) -> list[dict[str, Any]]:
    """Two good conversations, then one whose message has `msg` merged in."""
    data = claude_sample()
    bad = copy.deepcopy(data[0])
    bad["uuid"] = "0b6c2f0e-1111-4a6e-9d7a-2f1e0c9a00ff"
    bad["chat_messages"][0].update(msg)
    return [*data, bad]


def _chatgpt(create_time: Any) -> str:
    msg = {
        "id": "m1",
        "author": {"role": "user"},
        "content": {"content_type": "text", "parts": ["hi"]},
        "create_time": create_time,
    }
    conv = {
        "id": "c1",
        "title": "t",
        "create_time": 1_700_000_000,
        "current_node": "n1",
        "mapping": {"n1": {"id": "n1", "parent": None, "message": msg}},
    }
    return (
        "[" + json.dumps(conv).replace(json.dumps(create_time) + "}", "__T__}").replace("__T__", str(create_time)) + "]"
    )


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        (
            "negative time",
            json.dumps(_claude_with_last(created_at="1969-07-20T20:17:00Z")),
            "[2].chat_messages[0].created_at",
        ),
        (
            "far future",
            json.dumps(_claude_with_last(created_at="+275760-09-13T00:00:00Z")),
            "[2].chat_messages[0].created_at",
        ),
        ("NaN", _chatgpt("NaN"), "NaN"),
        ("huge number", _chatgpt("1" + "0" * 400), "create_time"),
        ("negative epoch", _chatgpt(-5), "create_time"),
        (
            "bad URL",
            json.dumps(_claude_with_last(uuid="x")).replace(
                "0b6c2f0e-1111-4a6e-9d7a-2f1e0c9a00ff", "a b/../%zz\\u0000"
            ),
            "conversations[2]",
        ),
        ("deep nesting", "[" * 100_000 + "]" * 100_000, "nested"),
        ("deep but parsable", '[{"uuid": "x", "chat_messages": [], "name": ' + "[" * 40 + "]" * 40 + "}]", "nested"),
    ],
)
async def test_a_hostile_file_is_refused_whole_in_one_line_and_nothing_is_stored(
    api: Api, settings: Settings, tmp_path: Path, name: str, content: str, needle: str
) -> None:
    bad = tmp_path / "conversations.json"
    bad.write_text(content, "utf-8")
    before = await counts(api)
    code, out, err = await wherefrom(settings, "import-chats", str(bad))
    assert code == 1, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert needle in err and "nothing was imported" in err, err
    assert await counts(api) == before


async def test_control_the_good_part_of_those_files_imports(api: Api, settings: Settings, tmp_path: Path) -> None:
    good = tmp_path / "conversations.json"
    good.write_text(json.dumps(claude_sample()), "utf-8")
    code, out, err = await wherefrom(settings, "import-chats", str(good))
    assert code == 0, err
    assert (await counts(api))["conversations"] == 2


def test_a_zip_member_is_inflated_as_a_stream_and_refused_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bomb = tmp_path / "export.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("conversations.json", "w") as f:
            f.write(b"[" + b" " * (64 * 1024 * 1024) + b"]")
    assert bomb.stat().st_size < 200 * 1024
    monkeypatch.setattr(chats, "MAX_BYTES", 8 * 1024 * 1024)
    read: list[int] = []
    real_read = zipfile.ZipExtFile.read

    def counting(self: zipfile.ZipExtFile, n: int = -1) -> bytes:
        chunk = real_read(self, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    with pytest.raises(chats.ExportFormatError, match="larger than 8 MB"):
        chats.read_file(bomb)
    assert sum(read) <= 9 * 1024 * 1024 and max(read) <= 1024 * 1024, "the member was inflated past the cap"
    monkeypatch.setattr(chats, "MAX_BYTES", 128 * 1024 * 1024)  # control: under the cap it reads
    assert chats.read_file(bomb).conversations == []


def test_an_encrypted_zip_is_one_line_and_exit_1(tmp_path: Path, settings: Settings) -> None:
    zpath = tmp_path / "export.zip"
    plain = tmp_path / "conversations.json"
    plain.write_text(json.dumps(claude_sample()), "utf-8")
    zip_tool = shutil.which("zip")
    if zip_tool is None:
        skip_unless_optional("no zip tool to build an encrypted zip")
    subprocess.run([str(zip_tool), "-q", "-j", "-P", "secret", str(zpath), str(plain)], check=True)
    with pytest.raises(chats.ExportFormatError, match="encrypted"):
        chats.read_file(zpath)
    good = tmp_path / "good.zip"  # control: the same member unencrypted reads
    with zipfile.ZipFile(good, "w") as zf:
        zf.write(plain, "conversations.json")
    assert len(chats.read_file(good).conversations) == 2
