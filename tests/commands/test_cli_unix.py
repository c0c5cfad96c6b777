"""`wherefrom` behaves as a Unix tool, run as real subprocesses against a real server: a closed
pipe ends quietly (no traceback, the SIGPIPE status), a server that is not there is one line
saying how to start it, every command and argument has help, `--version`, and `import` knows a
chat export when it is given one (and sends nothing), while `import-chats` takes the unzipped
export folder."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import server
from server.commands.main import CLOSED_PIPE, build_parser
from server.settings import Settings
from testkit.server_process import free_port
from tests.conftest import Api
from tests.dataio.test_dataio_import import claude_sample, counts

REPO = Path(__file__).resolve().parents[2]


async def run(
    settings: Settings, *args: str, port: int | None = None, closed_stdout: bool = False
) -> tuple[int, str, str]:
    """`python -m server ARGS --port --data-dir`; with `closed_stdout`, its stdout is a pipe whose
    reading end is already closed (what `| head -1` leaves once head has exited)."""
    read_end, write_end = os.pipe()
    if closed_stdout:
        os.close(read_end)
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
        stdout=write_end if closed_stdout else asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    os.close(write_end)
    if not closed_stdout:
        os.close(read_end)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode if proc.returncode is not None else -1, (out or b"").decode(), err.decode()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


async def seed(api: Api) -> None:
    for n in range(30):
        status, _ = await api.post(
            "/api/notes", {"url": f"https://pipe.example/{n}", "title": "p", "text": f"medlar note number {n}"}
        )
        assert status == 201


@pytest.mark.parametrize("args", [("search", "medlar", "--json"), ("search", "medlar"), ("status",)])
async def test_a_closed_pipe_ends_quietly(api: Api, settings: Settings, args: tuple[str, ...]) -> None:
    await seed(api)
    code, out, err = await run(settings, *args)
    assert code == 0 and out.strip(), err  # positive control: with a reader, it prints and succeeds
    code, _, err = await run(settings, *args, closed_stdout=True)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert err == "" and code == CLOSED_PIPE


async def test_a_closed_pipe_in_a_shell_pipeline(api: Api, settings: Settings) -> None:
    await seed(api)
    proc = await asyncio.create_subprocess_shell(
        f"{sys.executable} -m server search medlar --json --limit 100 --port {settings.port} "
        f"--data-dir {settings.data_dir} | head -1",
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert out.decode() == "{\n" and "Traceback" not in err.decode(), err.decode()


@pytest.mark.parametrize("args", [("search", "x"), ("status",), ("add", "https://a.example/"), ("export", "out")])
async def test_no_server_is_one_line_saying_how_to_start_it(
    settings: Settings, tmp_path: Path, args: tuple[str, ...]
) -> None:
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    (settings.data_dir / "token").write_text("t" * 43)
    port = free_port()
    code, out, err = await run(settings, *[a if a != "out" else str(tmp_path / "out") for a in args], port=port)
    lines = [ln for ln in (out + err).splitlines() if ln.strip() and "start it with" in ln]
    assert code == 1 and len(lines) == 1, (out, err)
    assert f"no server on 127.0.0.1:{port} — start it with: wherefrom serve --port {port} --data-dir" in lines[0]
    assert "Traceback" not in err and "urlopen" not in out + err


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"wherefrom {server.__version__}"


def test_every_command_and_argument_has_help() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    choices = getattr(sub, "choices", {})
    assert {"serve", "import", "import-chats", "export", "backup", "restore", "search", "mcp"} <= set(choices)
    for name, parser in choices.items():
        assert parser.description, f"{name} has no description"
        done = cli(name, "--help")
        assert done.returncode == 0, done.stderr
        shown = re.sub(r"\s+", "", done.stdout)  # help is wrapped, at spaces and at hyphens
        assert re.sub(r"\s+", "", parser.description) in shown
        for action in parser._actions:
            if action.dest == "help" or action.help == argparse.SUPPRESS:  # hidden on purpose (a browser's own)
                continue
            assert action.help, f"`wherefrom {name}` {action.option_strings or action.metavar}: no help text"
            assert re.sub(r"\s+", "", str(action.help % {"default": action.default})) in shown, (name, action.dest)


def chatgpt_sample() -> list[dict[str, object]]:
    return [
        {
            "title": "Medlars",
            "create_time": 1700000000.0,
            "update_time": 1700000100.0,
            "id": "c0ffee00-0000-4000-8000-000000000001",
            "current_node": "b",
            "mapping": {
                "a": {
                    "id": "a",
                    "parent": None,
                    "children": ["b"],
                    "message": {
                        "id": "a",
                        "author": {"role": "user"},
                        "create_time": 1700000000.0,
                        "content": {"content_type": "text", "parts": ["When are medlars ripe?"]},
                    },
                },
                "b": {
                    "id": "b",
                    "parent": "a",
                    "children": [],
                    "message": {
                        "id": "b",
                        "author": {"role": "assistant"},
                        "create_time": 1700000050.0,
                        "content": {"content_type": "text", "parts": ["After bletting, in late autumn."]},
                    },
                },
            },
        }
    ]


async def test_import_knows_a_chat_export_and_sends_nothing(api: Api, settings: Settings, tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_sample()), "utf-8")
    renamed = tmp_path / "my-chats.txt"
    renamed.write_text(json.dumps(claude_sample()), "utf-8")
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(export, "conversations.json")
    folder = tmp_path / "unzipped"
    folder.mkdir()
    (folder / "conversations.json").write_text(export.read_text("utf-8"), "utf-8")
    before = await counts(api)
    for given in (export, renamed, archive, folder):
        code, out, err = await run(settings, "import", str(given))
        assert code == 1 and f"import it with: wherefrom import-chats {given}" in err, err
        assert len(err.strip().splitlines()) == 1 and not out, (out, err)
    assert await counts(api) == before
    # positive control: a list of URLs is sent (the server refuses this one, so it says why)
    urls = tmp_path / "urls.txt"
    urls.write_text("# one line\nnot-a-url\n", "utf-8")
    code, out, err = await run(settings, "import", str(urls))
    assert code == 1 and "failed 1" in out and "[1/1] not-a-url" in err


async def test_import_chats_takes_the_unzipped_export_folder(api: Api, settings: Settings, tmp_path: Path) -> None:
    folder = tmp_path / "chatgpt-export"
    (folder / "inner").mkdir(parents=True)
    (folder / "inner" / "conversations.json").write_text(json.dumps(chatgpt_sample()), "utf-8")
    code, out, err = await run(settings, "import-chats", str(folder))
    assert code == 0, err
    assert re.search(r"1 conversations, 2 messages in the file", out), out
    _, conv = await api.get(
        "/api/conversations", params={"url": "https://chatgpt.com/c/c0ffee00-0000-4000-8000-000000000001"}
    )
    assert [t["text"] for t in conv["turns"]] == ["When are medlars ripe?", "After bletting, in late autumn."]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = await run(settings, "import-chats", str(empty))
    assert code == 1 and "holds no conversations.json" in err and "nothing was imported" in err
