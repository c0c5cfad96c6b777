"""Data in and out: import throughput on the real ChatGPT export, export time for a generated
store, backup time for the same store — each beside a same-run baseline.

    .venv/bin/python bench/bench_dataio.py                  # 100k-item store
    .venv/bin/python bench/bench_dataio.py --items 1000000  # the 1M store of bench_memory (slow to build)

  import   `import-chats` (parse, batches over HTTP, the server's writers) on
           ../shared/reference/exports/chatgpt-2023/conversations.json and on a copy of it
           --copies times over (default 20), in messages of the file per second; baseline:
           the same messages inserted with bare sqlite3 (INSERT_FACT, FTS triggers, one
           transaction) into a fresh database — the floor of storing them. Beside wall time, the
           CPU seconds of both (ours: this process, which parses and sends, plus the server's,
           its embedder included) — what a loaded machine does not blur.
  export   `wherefrom export --format json` and `--format markdown` (a subprocess, as a person
           runs it) on the bench_memory store; baseline: a bare sqlite3 SELECT of every fact and
           document written as JSON lines.
  backup   `wherefrom backup` (a subprocess) beside a bare `sqlite3 DB ".backup FILE"`, same store.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from memory_store import build, migrate  # noqa: E402

from server.commands import import_chats  # noqa: E402
from server.commands.client import Client  # noqa: E402
from server.dataio import chats  # noqa: E402
from server.dataio.backup import backup  # noqa: E402
from server.memory.facts import INSERT_FACT, fact_row  # noqa: E402
from server.provenance import stamp  # noqa: E402
from testkit.server_process import ServerProcess  # noqa: E402

EXPORT = REPO.parent / "shared" / "reference" / "exports" / "chatgpt-2023" / "conversations.json"


def wherefrom(server: ServerProcess, *args: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(  # noqa: S603 - this interpreter, fixed argv
        [sys.executable, "-m", "server", *args, "--port", str(server.port), "--data-dir", str(server.data_dir)],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def copies(path: Path, n: int, tmp: Path) -> Path:
    """The export `n` times over, each copy's conversation and message ids made its own (a
    bigger file of the same shape: n x 192 conversations, n x 1,560 messages)."""
    if n == 1:
        return path
    data = json.loads(path.read_text("utf-8"))
    out = []
    for k in range(n):
        for conv in data:
            text = json.dumps(conv)
            for nid in conv["mapping"]:
                text = text.replace(f'"{nid}"', f'"{nid}-{k}"')
            out.append({**json.loads(text), "id": f"{conv['id']}-{k}"})
    target = tmp / f"conversations-x{n}.json"
    target.write_text(json.dumps(out), "utf-8")
    return target


def bench_import(tmp: Path, n_copies: int = 1) -> list[tuple[str, float, str]]:
    if not EXPORT.exists():
        return [("import: skipped (no ../shared/reference export)", 0.0, "")]
    source = copies(EXPORT, n_copies, tmp)
    server = ServerProcess(tmp / f"import-data-{n_copies}").start(within=180)  # a loaded machine starts slowly
    try:
        assert server.proc is not None
        cpu0, t0 = time.process_time() + cpu_seconds(server.proc.pid), time.perf_counter()
        parsed = chats.read_file(source)
        client = Client(server.port, server.data_dir, timeout=import_chats.TIMEOUT)
        import_chats.run(client, parsed)
        ours = time.perf_counter() - t0
        ours_cpu = time.process_time() + cpu_seconds(server.proc.pid) - cpu0
    finally:
        server.stop()
    n = parsed.messages
    in_file = n + sum(parsed.skipped.values())
    db = tmp / f"bare-import-{n_copies}.db"
    migrate(db)
    cpu0, t0 = time.process_time(), time.perf_counter()
    con = sqlite3.connect(db)
    with con:
        for c in parsed.conversations:
            prov = stamp(c["url"], c["title"])
            cur = con.execute(
                "INSERT INTO conversations(site, source_url, source_host, source_ref, created_at, updated_at) "
                "VALUES (:site, :source_url, :source_host, :source_ref, :now, :now)",
                {"site": c["site"], **prov.columns(), "now": c["created_at"] or 0},
            )
            for t in c["turns"]:
                con.execute(
                    INSERT_FACT,
                    fact_row(
                        stamp(c["url"], t["native_id"]),
                        kind="turn",
                        title=c["title"],
                        text=t["text"],
                        valid_at=t["valid_at"],
                        granularity=t["granularity"],
                        now=t["valid_at"],
                        conversation_id=cur.lastrowid,
                        position=t["position"],
                        role=t["role"],
                        native_id=t["native_id"],
                        markdown=t.get("markdown"),
                        shown=t.get("shown", True),
                    ),
                )
    con.close()
    bare, bare_cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return [
        (
            f"import-chats x{n_copies}, {in_file} messages ({n} kept)",
            ours,
            f"{in_file / ours:8.0f} msg/s  x{bare / ours:4.2f} baseline"
            f"  (CPU {ours_cpu:.1f} s: {in_file / ours_cpu:.0f} msg/CPU-s, x{bare_cpu / ours_cpu:4.2f})",
        ),
        (
            "  baseline: bare sqlite3 inserts of the kept ones",
            bare,
            f"{in_file / bare:8.0f} msg/s  (CPU {bare_cpu:.1f} s: {in_file / bare_cpu:.0f} msg/CPU-s)",
        ),
    ]


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, every thread) a process has used so far; 0 off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text("ascii").rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_store(tmp: Path, items: int) -> list[tuple[str, float, str]]:
    data = tmp / "store-data"
    data.mkdir()
    db = data / "wherefrom.db"
    t0 = time.perf_counter()
    built = build(db, items)
    print(f"  built {built['items']:,} items in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    rows: list[tuple[str, float, str]] = []
    server = ServerProcess(data).start()
    try:
        t_json = wherefrom(server, "export", str(tmp / "out-json"), "--format", "json")
        t_md = wherefrom(server, "export", str(tmp / "out-md"), "--format", "markdown")
        files = sum(1 for _ in (tmp / "out-md").rglob("*.md"))
        t0 = time.perf_counter()
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        with (tmp / "bare.jsonl").open("w", encoding="utf-8") as out:
            for r in con.execute(
                "SELECT kind, source_url, title, text, valid_at, granularity, role FROM facts "
                "WHERE invalid_at IS NULL ORDER BY id"
            ):
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
            for r in con.execute("SELECT source_url, title, text FROM documents ORDER BY id"):
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
        con.close()
        t_bare = time.perf_counter() - t0
        rows += [
            (f"export --format json, {built['items']:,} items", t_json, f"x{t_json / t_bare:5.1f} baseline"),
            (f"export --format markdown ({files:,} files)", t_md, f"x{t_md / t_bare:5.1f} baseline"),
            ("  baseline: bare SELECT -> JSON lines", t_bare, ""),
        ]
        mb = db.stat().st_size / 1e6
        t_ours = wherefrom(server, "backup", str(tmp / "ours.db"))
        split = backup(db, tmp / "ours-inprocess.db")
        t0 = time.perf_counter()
        subprocess.run(["sqlite3", str(db), f".backup {tmp / 'bare.db'}"], check=True)  # noqa: S603, S607
        t_sqlite = time.perf_counter() - t0
        rows += [
            (f"wherefrom backup ({mb:.0f} MB, integrity checked)", t_ours, f"x{t_ours / t_sqlite:5.1f} baseline"),
            (
                "  of which, in process: the backup API copy",
                split["copy_seconds"],
                f"x{split['copy_seconds'] / t_sqlite:5.1f} baseline",
            ),
            ("  of which, in process: PRAGMA integrity_check", split["check_seconds"], ""),
            ("  baseline: sqlite3 .backup (a process)", t_sqlite, ""),
        ]
    finally:
        server.stop()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--copies", type=int, default=20, help="also import the real export this many times over")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wf-bench-dataio-"))
    try:
        rows: list[tuple[str, float, Any]] = bench_import(tmp) + bench_import(tmp, args.copies)
        rows += bench_store(tmp, args.items)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("data in and out (wall seconds, same run)")
    for name, secs, note in rows:
        print(f"  {name:<52} {secs:8.2f} s  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
