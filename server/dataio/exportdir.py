"""The export folder: what `wherefrom export` writes and what it must never destroy.

A manifest (DIR/.wherefrom-export.json) records, per item identity, the file last written for
it and the SHA-256 of the bytes written. On the next export:
  - the same bytes are already there          -> nothing written (stable files and mtimes);
  - the file is as we left it (its hash is the
    recorded one)                              -> rewritten in place, atomically;
  - the person changed it (or it is not ours)  -> left alone; the new version is written
                                                  beside it (`<name>.wherefrom-new.md`) and
                                                  reported, so no edit is ever lost;
  - the item's file name changed (a renamed
    conversation)                              -> the old file moves to the new name when the
                                                  person had not changed it; else it stays,
                                                  reported, and the new file is written.
Two items never share a path (checked case-insensitively: Windows and macOS fold case).
Every file and folder is reached through `server.private_files.SafeDir`: never through a link,
files 0600 and folders 0700, each file written whole to a temp file and renamed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from server.private_files import SafeDir, UnsafePath, safe_read, safe_replace, safe_unlink, safe_write

MANIFEST = ".wherefrom-export.json"
BESIDE = ".wherefrom-new"


class ExportClash(Exception):
    """Two items would share one file name."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclasses.dataclass
class ExportDir:
    root: SafeDir
    written: int = 0
    moved: int = 0
    beside: list[str] = dataclasses.field(default_factory=list)  # files the person changed: new one beside
    kept_old: list[str] = dataclasses.field(default_factory=list)  # renamed items whose old file was changed
    _files: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    _names: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def open(cls, path: Path) -> ExportDir:
        """The export folder `path` (made 0700 when missing; a link there is refused: UnsafePath)."""
        out = cls(SafeDir.make(path))
        try:
            raw = out.root.read(MANIFEST)
            data: Any = json.loads(raw.decode("utf-8")) if raw is not None else {}
            files = data.get("files", {}) if isinstance(data, dict) else {}
            out._files = {
                k: v
                for k, v in files.items()
                if isinstance(v, dict) and isinstance(v.get("path"), str) and isinstance(v.get("sha256"), str)
            }
        except UnsafePath:
            out.close()
            raise
        except (OSError, ValueError):
            pass  # no manifest (a first export) or an unreadable one: every existing file is the person's
        return out

    def write(self, identity: str, rel_path: str, text: str) -> str:
        """Write one item's file by the rules above; answers what happened."""
        if self._names.setdefault(rel_path.lower(), identity) != identity:
            raise ExportClash(f"two items would share {rel_path}; nothing more was written")
        data = text.encode("utf-8")
        prev = self._files.get(identity)
        recorded = prev["sha256"] if prev is not None and prev["path"] == rel_path else None
        if prev is not None and prev["path"] != rel_path:
            old_hash = self._hash_of(prev["path"])
            if old_hash == prev["sha256"] and self._hash_of(rel_path) is None:
                safe_replace(self.root, prev["path"], rel_path)  # renamed: the file moves with it
                self.moved += 1
                recorded = prev["sha256"]
            elif old_hash is not None:
                self.kept_old.append(prev["path"])
        current = self._hash_of(rel_path)
        if current == digest(data):
            outcome = "unchanged"
        elif current is None or current == recorded:
            safe_write(self.root, rel_path, data)
            self.written += 1
            outcome = "written"
        else:
            side = beside(rel_path)
            if self._hash_of(side) != digest(data):
                safe_write(self.root, side, data)
                self.written += 1
            self.beside.append(rel_path)
            # still the hash we last wrote there ("" when we never did): the person's file stays theirs
            self._files[identity] = {"path": rel_path, "sha256": recorded or ""}
            return "beside"
        self._files[identity] = {"path": rel_path, "sha256": digest(data)}
        return outcome

    def place(self, identity: str, rel_path: str, written: str) -> str:
        """Put a file already written aside (`written`, a name in this folder: a big streamed one,
        the JSON export) at `rel_path` by the same rules: over our own last file, else beside the
        person's."""
        new = self._hash_of(written)
        prev = self._files.get(identity)
        recorded = prev["sha256"] if prev is not None and prev["path"] == rel_path else None
        current = self._hash_of(rel_path)
        if current is not None and current == new:  # the same bytes are there: left as they are
            safe_unlink(self.root, written)
            self._files[identity] = {"path": rel_path, "sha256": new}
            return "unchanged"
        if current is None or current in (recorded, new):
            safe_replace(self.root, written, rel_path)
            self.written += 1
            self._files[identity] = {"path": rel_path, "sha256": new or ""}
            return "written"
        safe_replace(self.root, written, beside(rel_path))
        self.written += 1
        self.beside.append(rel_path)
        self._files[identity] = {"path": rel_path, "sha256": recorded or ""}
        return "beside"

    def save(self) -> None:
        """The manifest, with when this export ran (the exported files hold no time of their own)."""
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        manifest = {"version": 1, "exported_at": now, "files": dict(sorted(self._files.items()))}
        body = json.dumps(manifest, ensure_ascii=False, indent=0)
        self.root.write(MANIFEST, (body + "\n").encode("utf-8"))

    def close(self) -> None:
        self.root.close()

    def _hash_of(self, rel_path: str) -> str | None:
        """The SHA-256 of a file under the folder (None: no such file), never through a link."""
        try:
            data = safe_read(self.root, rel_path)
        except IsADirectoryError:
            return None
        return None if data is None else digest(data)


def beside(rel_path: str) -> str:
    """Where the new version of a file the person changed goes: `a/b.md` -> `a/b.wherefrom-new.md`."""
    folder, _, name = rel_path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    side = f"{stem}{BESIDE}.{suffix}" if dot and stem else f"{name}{BESIDE}"
    return f"{folder}/{side}" if folder else side
