"""The data directory is the person's alone: the directory 0700, the database (with its -wal,
-shm and -journal companions) and the token 0600, whatever the umask. Checked and fixed at
every start (`secure_data_dir`), and files are created private (`create_private`), so there is
no moment when another local user can read them.

SQLite gives its -wal and -shm files the permissions of the database file, so a database
created 0600 keeps its companions 0600 too; `secure_data_dir` also fixes files left by an
older version.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
