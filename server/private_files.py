"""The data directory is the person's alone: the directory 0700, the database (with its -wal,
-shm and -journal companions) and the token 0600, whatever the umask. Checked and fixed at
every start (`secure_data_dir`), and files are created private (`create_private`), so there is
no moment when another local user can read them.

SQLite gives its -wal and -shm files the permissions of the database file, so a database
created 0600 keeps its companions 0600 too; `secure_data_dir` also fixes files left by an
older version.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

T = TypeVar("T")

DIR_MODE = 0o700
FILE_MODE = 0o600
DB_COMPANIONS = ("", "-wal", "-shm", "-journal")


def private_paths(data_dir: Path, db_name: str, token_name: str) -> list[Path]:
    return [data_dir / (db_name + suffix) for suffix in DB_COMPANIONS] + [data_dir / token_name]


def make_private_dir(path: Path) -> None:
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)


def create_private(path: Path) -> None:
    """Create `path` empty and 0600 if it does not exist (before SQLite opens it)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        pass


def secure_data_dir(data_dir: Path, db_name: str, token_name: str) -> list[str]:
    """Make the data dir 0700 and our files in it 0600; the names of those that were not."""
    fixed: list[str] = []
    data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if stat.S_IMODE(data_dir.stat().st_mode) != DIR_MODE:
        os.chmod(data_dir, DIR_MODE)
        fixed.append(str(data_dir))
    for path in private_paths(data_dir, db_name, token_name):
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except FileNotFoundError:
            continue
        if mode != FILE_MODE and not path.is_symlink():
            os.chmod(path, FILE_MODE)
            fixed.append(path.name)
    return fixed


# ---------------------------------------------------------------- files the CLI writes
# Every file a command writes (export, backup, their partial files) is created without following
# links: folders are opened O_NOFOLLOW|O_DIRECTORY one level at a time and files are written to a
# fresh O_EXCL|O_NOFOLLOW temp name inside their folder, then renamed into place (rename replaces
# a name, never writes through a link). A symlink at the target, at a sub-folder or at the
# folder named on the command line is refused (UnsafePath); folders made are 0700, files 0600.
# The folders ABOVE the one named on the command line are the person's choice and are followed.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class UnsafePath(OSError):
    """A link (or something else than a folder or a file) where a command would write."""


class SafeDir:
    """A folder opened without following a link, for writing private files into. `SafeDir(path)`
    makes `path` (0700) when missing; `sub(name)` opens or makes a sub-folder the same way."""

    def __init__(self, path: Path, *, _fd: int | None = None) -> None:
        self.path = path
        if _fd is not None:
            self.fd = _fd
            return
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            self.fd = _open_sub(parent, path.name, path)
        finally:
            os.close(parent)

    @classmethod
    def make(cls, path: Path) -> SafeDir:
        """`path`, its missing parents made 0700 first (they are followed: the person named them)."""
        path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return cls(path)

    def sub(self, name: str) -> SafeDir:
        _plain_name(name)
        return SafeDir(self.path / name, _fd=_open_sub(self.fd, name, self.path / name))

    def read(self, name: str) -> bytes | None:
        """The file `name`'s bytes, None when there is none; UnsafePath when it is a link."""
        _plain_name(name)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as err:
            if _is_link(self.fd, name):
                raise UnsafePath(f"{self.path / name} is a link; not followed") from None
            raise err
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def write(self, name: str, data: bytes) -> None:
        with self.open_new(name) as f:
            f.write(data)

    @contextlib.contextmanager
    def open_new(self, name: str) -> Iterator[BinaryIO]:
        """Write `name` whole or not at all: a fresh 0600 temp file in this folder, renamed over
        `name` when the block ends without error (removed when it fails)."""
        _plain_name(name)
        if _is_link(self.fd, name):
            raise UnsafePath(f"{self.path / name} is a link; not written through")
        tmp = f".{name}.{secrets.token_hex(6)}.partial"
        fd = os.open(tmp, _NEW_FILE_FLAGS, FILE_MODE, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> SafeDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _plain_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\x00" in name:
        raise UnsafePath(f"not a plain file name: {name!r}")


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def _open_sub(dir_fd: int, name: str, shown: Path) -> int:
    """Open (making it 0700 if missing) the folder `name` inside `dir_fd`, never through a link."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, DIR_MODE, dir_fd=dir_fd)
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        if _is_link(dir_fd, name):
            raise UnsafePath(f"{shown} is a link; not followed") from None
        raise


def safe_write(root: SafeDir, rel_path: str, data: bytes) -> None:
    """Write `rel_path` (folders separated by '/') under `root`, every folder opened or made safely."""
    _at(root, rel_path, lambda folder, name: folder.write(name, data))


def safe_read(root: SafeDir, rel_path: str) -> bytes | None:
    """`rel_path`'s bytes under `root` (None when missing), never through a link."""
    return _at(root, rel_path, lambda folder, name: folder.read(name))


def safe_unlink(root: SafeDir, rel_path: str) -> None:
    """Remove the file `rel_path` under `root` (a missing one is fine), never through a link."""

    def unlink(folder: SafeDir, name: str) -> None:
        _plain_name(name)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder.fd)

    _at(root, rel_path, unlink)


def _at(root: SafeDir, rel_path: str, act: Callable[[SafeDir, str], T]) -> T:
    *folders, name = rel_path.split("/")
    current = root
    opened: list[SafeDir] = []
    try:
        for folder in folders:
            current = current.sub(folder)
            opened.append(current)
        return act(current, name)
    finally:
        for d in opened:
            d.close()


def safe_replace(root: SafeDir, old_rel: str, new_rel: str) -> None:
    """Move the file `old_rel` to `new_rel` under `root` (replacing it), neither end through a link."""
    *old_folders, old_name = old_rel.split("/")
    *new_folders, new_name = new_rel.split("/")
    opened: list[SafeDir] = []
    try:
        src = root
        for folder in old_folders:
            src = src.sub(folder)
            opened.append(src)
        dst = root
        for folder in new_folders:
            dst = dst.sub(folder)
            opened.append(dst)
        _plain_name(old_name)
        _plain_name(new_name)
        for end, name in ((src, old_name), (dst, new_name)):
            if _is_link(end.fd, name):
                raise UnsafePath(f"{end.path / name} is a link; not moved over")
        os.replace(old_name, new_name, src_dir_fd=src.fd, dst_dir_fd=dst.fd)
    finally:
        for d in opened:
            d.close()
