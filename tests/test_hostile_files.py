"""Files the CLI writes, in a folder where someone planted links: `wherefrom export` and
`wherefrom backup` never write through a link (a partial file, a predictable file name, a
sub-folder, the folder itself), refuse linked targets, and make files 0600 and folders 0700
whatever the umask. Each attack is checked on the victim file, with a clean export as control."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from server.settings import Settings
from tests.conftest import Api
from tests.dataio.test_dataio_import import wherefrom

VICTIM_TEXT = "the person's own file\n"


async def seed(api: Api) -> None:
    for url, text in (("https://example.com/a", "walnut note"), ("https://other.example/b", "quince note")):
        status, body = await api.post("/api/notes", {"url": url, "title": "T", "text": text})
        assert status == 201, body


def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text(VICTIM_TEXT)
    return v


async def export(settings: Settings, out: Path, fmt: str) -> tuple[int, str]:
    old = os.umask(0o022)
    try:
        code, _, err = await wherefrom(settings, "export", str(out), "--format", fmt)
    finally:
        os.umask(old)
    return code, err


async def learned_names(api: Api, settings: Settings, tmp_path: Path) -> list[str]:
    clean = tmp_path / "clean"
    code, err = await export(settings, clean, "markdown")
    assert code == 0, err
    return sorted(str(p.relative_to(clean)) for p in clean.rglob("*.md"))


async def test_control_a_clean_export_is_private(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api)
    for fmt in ("markdown", "json"):
        out = tmp_path / f"out-{fmt}"
        code, err = await export(settings, out, fmt)
        assert code == 0, err
        files = [p for p in out.rglob("*") if p.is_file()]
        assert files, "positive control: the export wrote files"
        assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}
        folders = [out, *(p for p in out.rglob("*") if p.is_dir())]
        assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in folders} == {"0o700"}
        assert not [p for p in out.rglob("*partial*")]


async def test_a_planted_partial_link_is_never_written_through(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api)
    v = victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "wherefrom.json.partial").symlink_to(v)
    code, err = await export(settings, out, "json")
    assert v.read_text() == VICTIM_TEXT
    assert code == 0 and "walnut note" in (out / "wherefrom.json").read_text(), err  # the export itself went fine


async def test_a_link_at_the_json_target_is_refused(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api)
    v = victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "wherefrom.json").symlink_to(v)
    code, err = await export(settings, out, "json")
    assert code == 1 and "link" in err, err
    assert v.read_text() == VICTIM_TEXT and (out / "wherefrom.json").is_symlink()


async def test_a_dangling_link_at_a_predictable_markdown_name_creates_nothing_outside(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    await seed(api)
    names = await learned_names(api, settings, tmp_path)
    out = tmp_path / "out"
    target = out / names[0]
    target.parent.mkdir(parents=True)
    outside = tmp_path / "planted-outside.md"
    target.symlink_to(outside)
    code, err = await export(settings, out, "markdown")
    assert not outside.exists(), "a file was created outside DIR through a dangling link"
    assert code == 1 and "link" in err, err


async def test_a_linked_sub_folder_is_not_written_through(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api)
    names = await learned_names(api, settings, tmp_path)
    sub = names[0].split("/")[0]
    assert "/" in names[0], names
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / sub).symlink_to(elsewhere, target_is_directory=True)
    code, err = await export(settings, out, "markdown")
    assert list(elsewhere.iterdir()) == []
    assert code == 1 and "link" in err, err


@pytest.mark.parametrize("fmt", ["markdown", "json"])
async def test_a_linked_export_folder_is_refused(api: Api, settings: Settings, tmp_path: Path, fmt: str) -> None:
    await seed(api)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.symlink_to(elsewhere, target_is_directory=True)
    code, err = await export(settings, out, fmt)
    assert code == 1 and "link" in err, err
    assert list(elsewhere.iterdir()) == []


async def test_backup_never_writes_through_a_link_and_is_private(api: Api, settings: Settings, tmp_path: Path) -> None:
    await seed(api)
    v = victim(tmp_path)
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "b.db.partial").symlink_to(v)  # the partial name an older build used
    dangling = folder / "c.db"
    dangling.symlink_to(tmp_path / "created-through-link.db")
    code, out, err = await wherefrom(settings, "backup", str(dangling))
    assert code == 1 and "exists" in err, err
    assert not (tmp_path / "created-through-link.db").exists()
    code, out, err = await wherefrom(settings, "backup", str(folder / "b.db"))  # control: a real backup
    assert code == 0, err
    assert v.read_text() == VICTIM_TEXT
    assert oct(stat.S_IMODE((folder / "b.db").stat().st_mode)) == "0o600"
    assert (folder / "b.db").read_bytes()[:16] == b"SQLite format 3\x00"
    assert sorted(p.name for p in folder.iterdir()) == ["b.db", "b.db.partial", "c.db"]  # no work folder left
