"""Counting our processes (the seeds' "do you leak? count before and after"), from /proc.

Every process a test session starts carries WHEREFROM_TEST_SESSION in its environment (set by
tests/conftest.py and e2e/conftest.py at session start; children inherit it, the workers and
resource trackers of a server we start included). A process of ours whose parent is no longer
one of ours has leaked: its parent died and left it behind (parent 1, or a subreaper).
Linux only (reads /proc); elsewhere nothing is counted.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

TAG = "WHEREFROM_TEST_SESSION"
PROC = Path("/proc")


def tag_session() -> str:
    """Give this session's children a tag of their own (kept when a parent already set one:
    xdist workers share their controller's). The tag ends with the pid that made it."""
    return os.environ.setdefault(TAG, f"{uuid.uuid4().hex}.{os.getpid()}")


def _root(tag: str) -> int:
    return int(tag.rsplit(".", 1)[1])


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a live process, or None."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")  # a zombie has already exited


def children(pid: int) -> list[int]:
    """Live direct children of pid."""
    out = []
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[1] == pid and st[0] not in ("Z", "X"):
                out.append(int(entry.name))
    return out


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def cmdline(pid: int) -> str:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def tagged(tag: str) -> dict[int, int]:
    """pid -> ppid of every live process whose environment carries this session's tag."""
    needle = f"{TAG}={tag}".encode()
    out: dict[int, int] = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        st = _stat(int(entry.name))
        if st is not None and st[0] not in ("Z", "X") and needle in env.split(b"\0"):
            out[int(entry.name)] = st[1]
    return out


def orphans(tag: str) -> dict[int, str]:
    """Our processes whose parent is neither ours nor this test process: pid -> command line."""
    ours = tagged(tag)
    mine = {os.getpid(), _root(tag)}  # a process's own environ is the one it started with: untagged
    return {
        pid: cmdline(pid) for pid, ppid in ours.items() if pid not in mine and ppid not in ours and ppid not in mine
    }


def wait_for_no_orphans(tag: str, within: float = 5.0) -> dict[int, str]:
    deadline = time.monotonic() + within
    while True:
        left = orphans(tag)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def session_start(config: object) -> None:
    """pytest_sessionstart: tag this session; count our orphans before (zero by construction)."""
    tag = tag_session()
    config.__dict__["_wherefrom_orphans_before"] = len(orphans(tag))


def session_finish(session: object) -> None:
    """pytest_sessionfinish (in the process that made the tag): fail the run when a process of
    ours outlived its parent (a killed server's worker or resource tracker, a browser helper)."""
    import pytest

    assert isinstance(session, pytest.Session)
    tag = os.environ.get(TAG, "")
    if not tag or _root(tag) != os.getpid() or not PROC.is_dir():
        return
    before = session.config.__dict__.get("_wherefrom_orphans_before", 0)
    left = wait_for_no_orphans(tag)
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(
            f"processes: {before} of ours without their parent before the run, {len(left)} after", red=bool(left)
        )
        for pid, line in left.items():
            tr.write_line(f"  leaked pid {pid}: {line[:160]}", red=True)
    if left and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
