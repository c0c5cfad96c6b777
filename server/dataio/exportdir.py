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
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

MANIFEST = ".wherefrom-export.json"
BESIDE = ".wherefrom-new"


class ExportClash(Exception):
    """Two items would share one file name."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclasses.dataclass
class ExportDir:
    root: Path
    written: int = 0
    moved: int = 0
    beside: list[str] = dataclasses.field(default_factory=list)  # files the person changed: new one beside
    kept_old: list[str] = dataclasses.field(default_factory=list)  # renamed items whose old file was changed
    _files: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    _names: dict[str, str] = dataclasses.field(default_factory=dict)
    _made: set[Path] = dataclasses.field(default_factory=set)

    @classmethod
    def open(cls, root: Path) -> ExportDir:
        out = cls(root)
        try:
            data: Any = json.loads((root / MANIFEST).read_text("utf-8"))
            files = data.get("files", {}) if isinstance(data, dict) else {}
            out._files = {
                k: v
                for k, v in files.items()
                if isinstance(v, dict) and isinstance(v.get("path"), str) and isinstance(v.get("sha256"), str)
            }
        except (OSError, ValueError):
            pass  # no manifest (a first export) or an unreadable one: every existing file is the person's
        return out

    def write(self, identity: str, rel_path: str, text: str) -> str:
        """Write one item's file by the rules above; answers what happened."""
        if self._names.setdefault(rel_path.lower(), identity) != identity:
            raise ExportClash(f"two items would share {rel_path}; nothing more was written")
        data = text.encode("utf-8")
        prev = self._files.get(identity)
        target = self.root / rel_path
        self._mkdir(target.parent)
        recorded = prev["sha256"] if prev is not None and prev["path"] == rel_path else None
        if prev is not None and prev["path"] != rel_path:
            old = self.root / prev["path"]
            if _hash_of(old) == prev["sha256"] and not target.exists():
                os.replace(old, target)  # renamed: the file moves with it
                self.moved += 1
                recorded = prev["sha256"]
            elif old.exists():
                self.kept_old.append(prev["path"])
        current = _hash_of(target)
        if current == digest(data):
            outcome = "unchanged"
        elif current is None or current == recorded:
            _atomic(target, data)
            self.written += 1
            outcome = "written"
        else:
            side = target.with_name(target.stem + BESIDE + target.suffix)
            if _hash_of(side) != digest(data):
                _atomic(side, data)
                self.written += 1
            self.beside.append(rel_path)
            # still the hash we last wrote there ("" when we never did): the person's file stays theirs
            self._files[identity] = {"path": rel_path, "sha256": recorded or ""}
            return "beside"
        self._files[identity] = {"path": rel_path, "sha256": digest(data)}
        return outcome

    def place(self, identity: str, rel_path: str, written: Path) -> str:
        """Put a file already written aside (`written`, a big streamed one: the JSON export) at
        `rel_path` by the same rules: over our own last file, else beside the person's."""
        new = _hash_of(written)
        prev = self._files.get(identity)
        recorded = prev["sha256"] if prev is not None and prev["path"] == rel_path else None
        target = self.root / rel_path
        current = _hash_of(target)
        if current is None or current in (recorded, new):
            os.replace(written, target)
            self.written += 1
            self._files[identity] = {"path": rel_path, "sha256": new or ""}
            return "written"
        os.replace(written, target.with_name(target.stem + BESIDE + target.suffix))
        self.written += 1
        self.beside.append(rel_path)
        self._files[identity] = {"path": rel_path, "sha256": recorded or ""}
        return "beside"

    def save(self) -> None:
        body = json.dumps({"version": 1, "files": dict(sorted(self._files.items()))}, ensure_ascii=False, indent=0)
        _atomic(self.root / MANIFEST, (body + "\n").encode("utf-8"))

    def _mkdir(self, folder: Path) -> None:
        if folder not in self._made:
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add(folder)


def _hash_of(path: Path) -> str | None:
    """The SHA-256 of a file, read in blocks (None: no such file)."""
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    except (FileNotFoundError, IsADirectoryError):
        return None
    return h.hexdigest()


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(data)
    os.replace(tmp, path)
