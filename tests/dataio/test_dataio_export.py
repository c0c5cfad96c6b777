"""`wherefrom export` as a person runs it (a real subprocess against a real server): JSON that
`wherefrom import-chats` reads back losslessly into another server, Markdown files that are
stable across runs, and the visibility rule (forgotten never; off only when asked)."""

from __future__ import annotations

import json
from pathlib import Path

from server.settings import Settings
from tests.conftest import Api, free_port, running_api
from tests.dataio.test_dataio_import import claude_sample, wherefrom
from tests.memory.test_memory_writes import set_mode

ARTICLE = "A long article about quince orchards and the jelly made from them. " * 20


async def seed(api: Api, tmp_path: Path, settings: Settings) -> None:
    """Every kind of item, with ids, without ids, day- and instant-granular, three hosts."""
    assert (
        await api.post(
            "/api/notes",
            {
                "url": "https://quince.example/orchards",
                "title": "Orchards",
                "text": "Plant in late autumn",
                "valid_day": "2024-11-02",
            },
        )
    )[0] == 201
    assert (
        await api.post(
            "/api/notes",
            {"url": "https://quince.example/orchards", "title": "Orchards", "text": "Second note, same page"},
        )
    )[0] == 201
    assert (
        await api.post(
            "/api/clips",
            {
                "url": "https://quince.example/jelly",
                "title": "Jelly",
                "text": "Boil for forty minutes\nthen test on a cold plate",
            },
        )
    )[0] == 201
    assert (
        await api.post(
            "/api/captures",
            {
                "url": "https://chatgpt.com/c/abc",
                "title": "Dog names",
                "site": "chatgpt",
                "turns": [
                    {"role": "user", "text": "Name my dog", "native_id": "t1"},
                    {"role": "assistant", "text": "Biscuit", "native_id": "t2"},
                ],
            },
        )
    )[0] == 200
    assert (
        await api.post(
            "/api/captures",
            {
                "url": "https://gemini.google.com/app/x1",
                "title": "",
                "site": "gemini",
                "turns": [{"role": "user", "text": "no ids here"}, {"role": "assistant", "text": "none at all"}],
            },
        )
    )[0] == 200
    assert (
        await api.post(
            "/api/library/add_text", {"url": "https://quince.example/history", "title": "History", "text": ARTICLE}
        )
    )[0] == 201
    sample = tmp_path / "claude.json"
    sample.write_text(json.dumps(claude_sample()), "utf-8")
    code, _, err = await wherefrom(settings, "import-chats", str(sample))
    assert code == 0, err
    # a site then turned off, and a site forgotten
    assert (
        await api.post(
            "/api/notes", {"url": "https://offlater.example/p", "title": "Off later", "text": "offlater-secret-7781"}
        )
    )[0] == 201
    await set_mode(api, "offlater.example", "off")
    assert (
        await api.post(
            "/api/notes", {"url": "https://forgot.example/p", "title": "Forgot", "text": "forgotten-secret-9932"}
        )
    )[0] == 201
    _, dry = await api.post("/api/forget", {"host": "forgot.example", "dry_run": True})
    status, _ = await api.post("/api/forget", {"host": "forgot.example", "confirm": dry["confirm"]})
    assert status == 200


async def test_json_export_round_trips_losslessly_through_import(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api, tmp_path, settings)
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "a"), "--format", "json")
    assert code == 0, err
    raw = (tmp_path / "a" / "wherefrom.json").read_text("utf-8")
    first = json.loads(raw)
    assert "forgotten-secret-9932" not in raw and "offlater-secret-7781" not in raw
    assert "left out (site off): 1 items from offlater.example" in out, out
    assert (len(first["conversations"]), len(first["facts"]), len(first["documents"])) == (4, 3, 1)
    # exported again into the same folder with nothing changed: nothing rewritten
    before = (tmp_path / "a" / "wherefrom.json").stat().st_mtime_ns
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "a"), "--format", "json")
    assert code == 0 and "; 0 files written" in out, (out, err)
    assert (tmp_path / "a" / "wherefrom.json").stat().st_mtime_ns == before
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [".wherefrom-export.json", "wherefrom.json"]
    # progress on stderr: each kind against the total the server announced (plain lines, not a terminal)
    for line in (
        "exporting conversations: 4/4 items",
        "exporting notes and clips: 3/3 items",
        "exporting documents: 1/1 items",
    ):
        assert line in err.splitlines(), err
    # a second, empty server: import the export, export again, compare
    other = Settings(data_dir=tmp_path / "b-data", port=free_port())
    async with running_api(other) as api_b:
        code, out, err = await wherefrom(other, "import-chats", str(tmp_path / "a" / "wherefrom.json"))
        assert code == 0, err
        code, out, err = await wherefrom(other, "export", str(tmp_path / "b"), "--format", "json")
        assert code == 0, err
        # the same file, byte for byte: no export time inside it (the folder's manifest keeps that)
        assert (tmp_path / "b" / "wherefrom.json").read_bytes() == raw.encode("utf-8")
        assert "exported_at" in json.loads((tmp_path / "b" / ".wherefrom-export.json").read_text("utf-8"))
        # and importing it again adds nothing
        code, out, err = await wherefrom(other, "import-chats", str(tmp_path / "a" / "wherefrom.json"))
        assert "0 added" in out and "notes and clips: 0 added, 3 already there" in out and "documents: 0 added" in out
        row = await api_b.store.fetchone("SELECT COUNT(*) FROM facts")
        assert row is not None and row[0] == 3 + sum(len(c["turns"]) for c in first["conversations"])


async def test_include_off_is_the_only_way_off_items_leave_and_forgotten_never_do(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    await seed(api, tmp_path, settings)
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "x"), "--format", "json", "--include-off")
    assert code == 0, err
    raw = (tmp_path / "x" / "wherefrom.json").read_text("utf-8")
    assert "offlater-secret-7781" in raw  # asked for: it leaves
    assert "forgotten-secret-9932" not in raw  # forgotten: never
    assert json.loads(raw)["filters"]["include_off"] is True


async def test_site_and_since_filters(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api, tmp_path, settings)
    code, out, err = await wherefrom(
        settings, "export", str(tmp_path / "s"), "--format", "json", "--site", "quince.example"
    )
    doc = json.loads((tmp_path / "s" / "wherefrom.json").read_text("utf-8"))
    assert code == 0 and doc["conversations"] == [] and len(doc["facts"]) == 3 and len(doc["documents"]) == 1
    code, out, err = await wherefrom(
        settings, "export", str(tmp_path / "t"), "--format", "json", "--since", "2024-01-01"
    )
    doc = json.loads((tmp_path / "t" / "wherefrom.json").read_text("utf-8"))
    # the Claude conversation dated 2023-11-20 and nothing else is older
    assert {c["title"] for c in doc["conversations"]} == {"Dog names", "", "Quince jelly"}
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "u"), "--since", "yesterday")
    assert code == 1 and "--since must be a day" in err, err


async def test_markdown_files_have_front_matter_and_are_stable(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api, tmp_path, settings)
    target = tmp_path / "md"
    code, out, err = await wherefrom(settings, "export", str(target))
    assert code == 0, err
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*.md"))
    # 4 conversations, 2 pages with notes or clips, 1 document
    assert [f.split("/")[0] for f in files].count("conversations") == 4
    assert [f.split("/")[0] for f in files].count("notes") == 2
    assert [f.split("/")[0] for f in files].count("library") == 1
    assert not any("offlater" in f or "forgot" in f for f in files)
    page = next(target.glob("notes/quince.example/orchards-*.md")).read_text("utf-8")
    assert page.startswith('---\nkind: "page-notes"\nurl: "https://quince.example/orchards"\nsite: "quince.example"')
    assert "## Note · 2024-11-02\n\nPlant in late autumn" in page  # a day-granular note shows its day
    dog = next(target.glob("conversations/chatgpt/dog-names-*.md")).read_text("utf-8")
    assert "## User · " in dog and "Biscuit" in dog
    before = {f: (target / f).read_bytes() for f in files}
    mtimes = {f: (target / f).stat().st_mtime_ns for f in files}
    code, out, err = await wherefrom(settings, "export", str(target))
    assert code == 0 and "0 files written" in out, out
    assert {f: (target / f).read_bytes() for f in files} == before
    assert {f: (target / f).stat().st_mtime_ns for f in files} == mtimes
    # positive control: a new note on a page rewrites that page's file only
    await api.post("/api/notes", {"url": "https://quince.example/orchards", "title": "Orchards", "text": "Third"})
    code, out, err = await wherefrom(settings, "export", str(target))
    assert "1 files written" in out, out


async def test_a_documents_file_says_its_title_once(api: Api, settings: Settings, tmp_path: Path) -> None:
    """A saved page's Markdown usually opens with the page's own heading, the title: the file's
    title heading is not followed by the same heading again (a heading that differs is kept)."""
    html = (
        "<html><head><title>Quince cultivation</title></head><body><article><h1>Quince cultivation</h1>"
        f"<p>{ARTICLE}</p><h2>Pruning</h2><p>{ARTICLE}</p></article></body></html>"
    )
    for url, title in (("https://quince.example/same", "Quince cultivation"), ("https://quince.example/other", "Q")):
        status, _ = await api.post("/api/library/add_text", {"url": url, "title": title, "html": html})
        assert status == 201
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "md"))
    assert code == 0, err
    same = next((tmp_path / "md").glob("library/quince.example/quince-cultivation-*.md")).read_text("utf-8")
    assert same.count("# Quince cultivation\n") == 1 and "\n## Pruning\n" in same, same[:400]
    assert same.split("---\n", 2)[2].startswith("\n# Quince cultivation\n\nA long article")
    other = next((tmp_path / "md").glob("library/quince.example/q-*.md")).read_text("utf-8")
    assert "\n# Q\n\n# Quince cultivation\n" in other  # the page's own heading, not the title: kept


async def test_a_captured_chat_without_a_title_is_named_by_its_first_question(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    """A chat captured before the site titled it has no title, or the site's own name as the tab's
    title ("ChatGPT"): its file, front matter and heading take its first question, as an imported
    untitled chat does; a chat with a title keeps it."""
    chats = (
        ("https://claude.ai/chat/u-1", "claude", "", "Why is the sky blue?"),
        ("https://chatgpt.com/c/u-2", "chatgpt", "ChatGPT", "Best way to learn Rust?"),
        ("https://chatgpt.com/c/u-3", "chatgpt", "Rust learning plan", "How do I start with Rust?"),
    )
    for url, site, title, question in chats:
        turns = [{"role": "user", "text": question}, {"role": "assistant", "text": "An answer."}]
        status, _ = await api.post("/api/captures", {"url": url, "title": title, "site": site, "turns": turns})
        assert status == 200
    code, out, err = await wherefrom(settings, "export", str(tmp_path / "md"))
    assert code == 0, err
    names = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "md").rglob("*.md"))
    assert names == ["best-way-to-learn-rust", "rust-learning-plan", "why-is-the-sky-blue"], names
    sky = next((tmp_path / "md").glob("conversations/claude/why-is-the-sky-blue-*.md")).read_text("utf-8")
    assert '\ntitle: "Why is the sky blue?"\n' in sky and "\n# Why is the sky blue?\n" in sky
