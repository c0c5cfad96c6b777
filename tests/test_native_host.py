"""The browser link's host as Chrome runs it (a real subprocess, real pipes): framing, the caller
check, refusals (each answered with an error, then the host exits), and its manifest."""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.nativehost.framing import MAX_REPLY, MAX_REQUEST, encode_message
from testkit.native_host import OTHER, OURS, REPO, frame, host_argv, talk, unframe
from tests.conftest import free_port


def test_locate_without_a_server_says_not_running_and_gives_no_token(tmp_path: Path) -> None:
    code, replies, _ = talk(tmp_path / "d", free_port(), frame({"type": "locate"}))
    assert code == 0
    assert len(replies) == 1 and replies[0]["ok"] is True and replies[0]["running"] is False
    assert "token" not in replies[0]


def test_two_requests_on_one_pipe_are_answered_in_order_then_eof_exits_0(tmp_path: Path) -> None:
    code, replies, _ = talk(tmp_path / "d", free_port(), frame({"type": "locate"}) + frame({"type": "locate"}))
    assert code == 0 and [r["running"] for r in replies] == [False, False]


def test_the_length_prefix_is_native_byte_order(tmp_path: Path) -> None:
    body = json.dumps({"type": "locate"}).encode()
    swapped = struct.pack("<I" if sys.byteorder == "big" else ">I", len(body)) + body
    code, replies, _ = talk(tmp_path / "d", free_port(), swapped)
    # the other byte order reads as a huge length: refused, never waited for
    assert code == 1 and replies[0]["error"]["code"] == "too_large"
    code, replies, _ = talk(tmp_path / "d", free_port(), struct.pack("=I", len(body)) + body)  # control
    assert code == 0 and replies[0]["ok"] is True


@pytest.mark.parametrize(
    "request_",
    [{"type": "shutdown"}, {"type": "locate", "token": "x"}, {}, ["locate"], "locate", None, {"type": 1}],
    ids=["unknown-type", "extra-field", "empty", "array", "string", "null", "number-type"],
)
def test_an_unknown_request_is_refused_and_the_host_exits(tmp_path: Path, request_: object) -> None:
    code, replies, _ = talk(tmp_path / "d", free_port(), frame(request_) + frame({"type": "locate"}))
    assert code == 1
    assert len(replies) == 1, "the host answered after refusing"
    assert replies[0]["ok"] is False and replies[0]["error"]["code"] == "unknown_request"


def test_not_json_and_cut_short_input_are_refused(tmp_path: Path) -> None:
    port = free_port()
    code, replies, _ = talk(tmp_path / "d", port, struct.pack("=I", 3) + b"\xff{}")
    assert code == 1 and replies[0]["error"]["code"] == "bad_json"
    code, replies, _ = talk(tmp_path / "d", port, struct.pack("=I", 40) + b'{"type": ')
    assert code == 1 and replies[0]["error"]["code"] == "truncated"
    code, replies, _ = talk(tmp_path / "d", port, b"\x01\x00")  # inside the length prefix
    assert code == 1 and replies[0]["error"]["code"] == "truncated"


def test_closed_stdin_exits_0_without_a_word(tmp_path: Path) -> None:
    code, replies, err = talk(tmp_path / "d", free_port(), b"")
    assert (code, replies, err) == (0, [], "")


def test_an_oversized_request_is_refused_without_being_read(tmp_path: Path) -> None:
    # only the prefix is sent and stdin stays open: a host that tried to read the body would hang
    proc = subprocess.Popen(  # noqa: S603
        host_argv(tmp_path / "d", free_port()), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(struct.pack("=I", MAX_REQUEST + 1))
        proc.stdin.flush()
        code = proc.wait(timeout=30)
        replies = unframe(proc.stdout.read())
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
    assert code == 1 and replies[0]["error"]["code"] == "too_large"
    # the control: a request at the cap's edge is read (and refused only for what it says)
    padded = {"type": "locate", "pad": "x" * (MAX_REQUEST - 40)}
    assert len(json.dumps(padded)) <= MAX_REQUEST
    code, replies, _ = talk(tmp_path / "d", free_port(), frame(padded))
    assert replies[0]["error"]["code"] == "unknown_request"


def test_a_reply_over_chromes_1mb_limit_is_never_written() -> None:
    assert len(encode_message({"s": "x" * (MAX_REPLY - 20)})) <= MAX_REPLY + 4
    with pytest.raises(ValueError, match="at most"):
        encode_message({"s": "x" * MAX_REPLY})


@pytest.mark.parametrize(
    "origin", [OTHER, "chrome-extension://gidncpejkfcnakpojbbbhocinihfkjmj", "https://evil.example/", None]
)
def test_another_caller_is_refused_before_anything_is_read(tmp_path: Path, origin: str | None) -> None:
    data = tmp_path / "d"
    code, replies, _ = talk(data, free_port(), frame({"type": "start"}), origin=origin)
    assert code == 1 and len(replies) == 1
    assert replies[0] == {"ok": False, "error": {"code": "origin", "message": replies[0]["error"]["message"]}}
    assert not data.exists(), "a refused caller made the host touch the data dir (start a server?)"
    code, replies, _ = talk(data, free_port(), frame({"type": "locate"}), origin=OURS)  # positive control
    assert code == 0 and replies[0]["ok"] is True


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "server", *args], capture_output=True, text=True, timeout=60, cwd=REPO, env=env
    )


def test_install_browser_link_writes_a_manifest_for_our_id_only_and_uninstall_removes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    data, port = tmp_path / "data", free_port()
    done = run_cli(
        "install-browser-link", "--browser", "chromium", "--data-dir", str(data), "--port", str(port), env=env
    )
    assert done.returncode == 0, done.stderr
    where = home / ".config" / "chromium" / "NativeMessagingHosts"
    manifest = json.loads((where / "org.wherefrom.companion.json").read_text("utf-8"))
    assert manifest["allowed_origins"] == [OURS] and manifest["type"] == "stdio"
    launcher = Path(manifest["path"])
    assert launcher.is_absolute() and launcher.parent == where
    assert stat.S_IMODE(launcher.stat().st_mode) == 0o700
    # the launcher is what Chrome runs: it speaks the protocol for our origin, refuses another
    for origin, ok in ((OURS, True), (OTHER, False)):
        out = subprocess.run([str(launcher), origin], input=frame({"type": "locate"}), capture_output=True, timeout=60)  # noqa: S603
        (reply,) = unframe(out.stdout)
        assert reply["ok"] is ok, reply
        if ok:
            assert reply["url"] == f"http://127.0.0.1:{port}"
    # another browser's directory, and a profile root given explicitly (a browser run with --user-data-dir)
    profile = tmp_path / "profile"
    assert (
        run_cli("install-browser-link", "--browser", "chrome", "--user-data-dir", str(profile), env=env).returncode == 0
    )
    assert (profile / "NativeMessagingHosts" / "org.wherefrom.companion.json").is_file()
    assert run_cli("install-browser-link", "--browser", "brave", env=env).returncode == 0
    assert (home / ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts/org.wherefrom.companion.json").is_file()
    # uninstall removes ours and nothing else
    (where / "someone.else.json").write_text("{}", "utf-8")
    gone = run_cli("install-browser-link", "--browser", "chromium", "--uninstall", env=env)
    assert gone.returncode == 0
    assert sorted(p.name for p in where.iterdir()) == ["someone.else.json"]


def test_the_host_starts_quickly_enough_for_a_browser(tmp_path: Path) -> None:
    """Not a timing test: a sanity bound so a host that hangs on import is caught here, not in the farm."""
    t0 = time.monotonic()
    talk(tmp_path / "d", free_port(), b"")
    assert time.monotonic() - t0 < 30
