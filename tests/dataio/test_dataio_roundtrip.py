"""Lossless JSON and safe re-export, as a person runs them: import the real ChatGPT export, export
JSON, import that into an EMPTY store, export again: the same files, byte for byte; and every
Markdown file closes every code fence it opens (skipped cleanly without ../shared/reference)."""

from __future__ import annotations

from pathlib import Path

from server.settings import Settings
from server.textcaps import open_fence
from testkit.server_process import ServerProcess
from tests.conftest import Api
from tests.dataio.test_dataio_import import CHATGPT, needs_chatgpt, wherefrom


def run(server: ServerProcess, *args: str) -> str:
    import subprocess
    import sys

    out = subprocess.run(  # noqa: S603 - this interpreter, fixed argv
        [sys.executable, "-m", "server", *args, "--port", str(server.port), "--data-dir", str(server.data_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ("wherefrom.json", ".wherefrom-export.json")
    }


@needs_chatgpt
async def test_export_import_export_gives_identical_files(api: Api, settings: Settings, tmp_path: Path) -> None:
    code, out, err = await wherefrom(settings, "import-chats", str(CHATGPT))
    assert code == 0, err
    # and a chat captured as the extension posts it: code, a table, math (Markdown beside the text)
    captured_md = (
        'Here:\n\n```python\nprint("hello")\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n$$e^{i\\pi} + 1 = 0$$\n'
    )
    turns = [
        {"role": "user", "text": "show me", "native_id": "cap-u1"},
        {"role": "assistant", "text": 'Here: print("hello") a b 1 2 e^{i\\pi} + 1 = 0', "markdown": captured_md},
    ]
    status, _ = await api.post(
        "/api/captures",
        {"url": "https://claude.ai/chat/captured", "title": "Captured", "site": "claude", "turns": turns},
    )
    assert status == 200
    first_json, first_md = tmp_path / "json1", tmp_path / "md1"
    for folder, fmt in ((first_json, "json"), (first_md, "markdown")):
        code, out, err = await wherefrom(settings, "export", str(folder), "--format", fmt)
        assert code == 0, err
    md = files(first_md)
    conversations = {k: v for k, v in md.items() if k.startswith("conversations/")}
    assert len(conversations) == 193
    [captured] = [v.decode("utf-8") for k, v in conversations.items() if k.startswith("conversations/claude/")]
    assert captured_md.rstrip() in captured  # the stored Markdown, not the plain text
    # every code fence a turn opens is closed within the file (the real file has replies cut mid-code)
    assert [k for k, v in conversations.items() if open_fence(v.decode("utf-8"))] == []
    assert sum(b" of 2\n" in v for v in conversations.values()) >= 1  # the other versions are said
    empty = ServerProcess(tmp_path / "empty").start()
    try:
        run(empty, "import-chats", str(first_json / "wherefrom.json"))
        second_json, second_md = tmp_path / "json2", tmp_path / "md2"
        run(empty, "export", str(second_json), "--format", "json")
        run(empty, "export", str(second_md), "--format", "markdown")
    finally:
        empty.stop()
    one, two = (first_json / "wherefrom.json").read_bytes(), (second_json / "wherefrom.json").read_bytes()
    assert one == two  # byte for byte
    assert b'"markdown": ' in one and b'"shown": false' in one
    assert files(second_md) == md


async def test_reexport_never_overwrites_an_edited_file_and_moves_a_renamed_one(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    url = "https://chatgpt.com/c/rename-me"
    turns = [{"role": "user", "text": "fence?"}, {"role": "assistant", "text": "x", "markdown": "```py\nx = 1"}]
    status, _ = await api.post("/api/captures", {"url": url, "title": "Before", "site": "chatgpt", "turns": turns})
    assert status == 200
    await api.post("/api/notes", {"url": "https://chatgpt.com/", "text": "a note on the site"})
    out = tmp_path / "out"
    code, _, err = await wherefrom(settings, "export", str(out), "--site", "chatgpt")
    assert code == 0, err
    [conv] = list((out / "conversations" / "chatgpt").glob("*.md"))
    assert conv.name.startswith("before-") and "```py\nx = 1\n```" in conv.read_text("utf-8")
    assert list((out / "notes").rglob("*.md")), "--site chatgpt also takes the notes on its host"
    # renamed: the file moves (it was not edited)
    await api.post("/api/captures", {"url": url, "title": "After", "site": "chatgpt", "turns": turns})
    code, _, err = await wherefrom(settings, "export", str(out), "--site", "chatgpt")
    assert code == 0, err
    [moved] = list((out / "conversations" / "chatgpt").glob("*.md"))
    assert moved.name.startswith("after-") and moved.name[-15:] == conv.name[-15:]  # the same stable id
    # the person edits it; a new turn arrives; the next export writes beside it and says so
    moved.write_text(moved.read_text("utf-8") + "\nmy own notes\n", "utf-8")
    await api.post(
        "/api/captures",
        {"url": url, "title": "After", "site": "chatgpt", "turns": [*turns, {"role": "user", "text": "more"}]},
    )
    code, _, err = await wherefrom(settings, "export", str(out), "--site", "chatgpt")
    assert code == 0, err
    assert "my own notes" in moved.read_text("utf-8") and "kept your edits" in err
    beside = moved.with_name(moved.stem + ".wherefrom-new.md")
    assert "more" in beside.read_text("utf-8") and "my own notes" not in beside.read_text("utf-8")


async def test_a_changed_json_export_is_kept_and_the_new_one_written_beside(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    await api.post("/api/notes", {"url": "https://notes.example/a", "text": "first note"})
    out = tmp_path / "json"
    code, _, err = await wherefrom(settings, "export", str(out), "--format", "json")
    assert code == 0, err
    # positive control: our own file is simply replaced by the next export
    await api.post("/api/notes", {"url": "https://notes.example/a", "text": "second note"})
    code, _, err = await wherefrom(settings, "export", str(out), "--format", "json")
    assert code == 0 and "second note" in (out / "wherefrom.json").read_text("utf-8") and "kept" not in err
    (out / "wherefrom.json").write_text("my own edit\n", "utf-8")
    code, _, err = await wherefrom(settings, "export", str(out), "--format", "json")
    assert code == 0, err
    assert (out / "wherefrom.json").read_text("utf-8") == "my own edit\n" and "kept your edits" in err
    assert "second note" in (out / "wherefrom.wherefrom-new.json").read_text("utf-8")
