"""The pairing token: 256 random bits, created once, stored 0600."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from server.private_files import make_private_dir


def load_or_create(path: Path) -> str:
    make_private_dir(path.parent)
    if path.exists():
        token = path.read_text("ascii").strip()
        if len(token) >= 43:
            os.chmod(path, 0o600)
            return token
    token = secrets.token_urlsafe(32)  # 32 bytes = 256 bits
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(token + "\n")
    os.chmod(path, 0o600)
    return token
