"""An independent wire tap: a small recording HTTP proxy that Chromium is forced through.

Chromium is launched with `--proxy-server=http://127.0.0.1:<tap>` and `--proxy-bypass-list=<-loopback>`
(which removes Chromium's implicit loopback bypass), so every request from every context — the
service worker, extension pages, content scripts, web pages and the browser itself — reaches the tap,
loopback included. The tap runs in its own thread with its own asyncio loop: it does not depend on
the extension's code, on Playwright's network events, or on the test's event loop.

What it does with each request:
- plain HTTP to 127.0.0.1/localhost/[::1]: recorded (method, URL, headers, first 64 KB of the body),
  then forwarded to its target and the answer relayed (status recorded); when nothing listens there
  the client's connection is closed without an answer (status 0), so the browser sees a network
  error, as it would without the tap (a 502 would read as "the server answered");
- plain HTTP anywhere else: recorded and answered 502 (nothing leaves the machine);
- CONNECT (an https tunnel): the host is recorded and the tunnel refused (403). The fixture pages are
  answered by Playwright routing inside the browser and never need a tunnel.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from yarl import URL

BODY_LIMIT = 64 * 1024
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
CONTROL_PREFIX = "/__wf_control/"


@dataclasses.dataclass
class Record:
    seq: int
    t: float  # time.monotonic() when the request line arrived
    method: str
    url: str  # absolute URL for plain HTTP; "host:port" for CONNECT
    host: str
    port: int
    headers: list[tuple[str, str]]
    body: bytes = b""
    body_len: int = 0
    status: int | None = None  # what the client was answered
    forwarded: bool = False
    done: bool = False  # the exchange is over (answered, refused, or the relay ended)
    context: str = "unknown"  # best guess of the sending context (see browser.attribute)

    @property
    def is_connect(self) -> bool:
        return self.method == "CONNECT"

    @property
    def path(self) -> str:
        return "" if self.is_connect else (urlsplit(self.url).path or "/")

    def server_key(self) -> tuple[str, str, str]:
        """(method, path, query) as the server's ledger writes them (aiohttp's decoding, via yarl)."""
        u = URL(self.url, encoded=True)
        return (self.method, u.path, u.query_string)

    @property
    def query(self) -> dict[str, str]:
        return {} if self.is_connect else dict(parse_qsl(urlsplit(self.url).query, keep_blank_values=True))

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    @property
    def origin(self) -> str | None:
        return self.header("origin")

    @property
    def is_control(self) -> bool:
        return self.path.startswith(CONTROL_PREFIX)

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None

    def haystack(self) -> str:
        """Everything the request carries, as text: URL (decoded), headers, body (and JSON strings)."""
        parts = [self.url, unquote_plus(self.url)]
        parts += [f"{k}: {v}" for k, v in self.headers]
        text = self.body.decode("utf-8", errors="replace")
        parts.append(text)
        data = self.json()
        if data is not None:
            parts.extend(_strings(data))
        return " ".join(" ".join(p.split()) for p in parts)

    def summary(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "context": self.context,
            "origin": self.origin,
            "body": self.body[:300].decode("utf-8", errors="replace"),
        }


def _strings(data: Any) -> list[str]:
    out: list[str] = []
    if isinstance(data, str):
        out.append(data)
    elif isinstance(data, dict):
        for k, v in data.items():
            out.append(str(k))
            out.extend(_strings(v))
    elif isinstance(data, list):
        for v in data:
            out.extend(_strings(v))
    elif data is not None:
        out.append(str(data))
    return out


class Tap:
    """The recording proxy. `start()` binds a free loopback port; `records()` is thread-safe."""

    def __init__(self) -> None:
        self.port = 0
        self._records: list[Record] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._seq = 0
        # the loopback ports the tap forwards to (the test's own server); anything else on
        # loopback is recorded and refused, so a test never talks to a stranger's process
        self.forward_ports: set[int] = set()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Tap:
        self._thread = threading.Thread(target=self._run, name="wf-tap", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the wire tap did not start within 10 s")
        if self._error:
            raise RuntimeError(f"the wire tap could not start: {self._error}")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    def stop(self) -> None:
        if self._loop and self._thread and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    @property
    def proxy_args(self) -> list[str]:
        return [f"--proxy-server=http://127.0.0.1:{self.port}", "--proxy-bypass-list=<-loopback>"]

    # ------------------------------------------------------------------ reading
    def records(self, since: int = 0) -> list[Record]:
        """Records with seq >= since (a value from `mark()`)."""
        with self._lock:
            return [r for r in self._records if r.seq >= since]

    def mark(self) -> int:
        """The seq the next record will get: `records(since=mark)` is what happened after now."""
        with self._lock:
            return self._seq

    def in_flight(self, port: int | None = None) -> list[Record]:
        """Requests still being handled (to `port` when given)."""
        with self._lock:
            return [r for r in self._records if not r.done and (port is None or r.port == port)]

    async def drain(self, port: int | None = None, within: float = 15.0, quiet: float = 0.3) -> bool:
        """Wait until no request (to `port`) is in flight and none has arrived for `quiet` s."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            last = max((r.t for r in self.records() if port is None or r.port == port), default=0)
            if not self.in_flight(port) and time.monotonic() - last >= quiet:
                return True
            await asyncio.sleep(0.05)
        return False

    async def wait_for(self, pred: Any, within: float = 10.0, since: int = 0) -> Record | None:
        deadline = time.monotonic() + within
        while True:
            for r in self.records(since):
                if pred(r):
                    return r
            if time.monotonic() >= deadline:
                return None
            await asyncio.sleep(0.05)

    # ------------------------------------------------------------------ proxy
    def _add(self, rec: Record, current: list[Record] | None = None) -> None:
        if current is not None:
            current.append(rec)
        with self._lock:
            rec.seq = self._seq
            self._seq += 1
            self._records.append(rec)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        current: list[Record] = []
        try:
            while True:
                keep = await self._one(reader, writer, current)
                if not keep:
                    break
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            pass
        finally:
            for rec in current:
                rec.done = True
            try:
                writer.close()
            except Exception:  # noqa: BLE001, S110
                pass

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, current: list[Record]) -> bool:
        line = await reader.readline()
        if not line:
            return False
        t = time.monotonic()
        try:
            method, target, version = line.decode("latin-1").strip().split(" ", 2)
        except ValueError:
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return False
        headers: list[tuple[str, str]] = []
        while True:
            h = await reader.readline()
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers.append((k.strip(), v.strip()))
        hmap = {k.lower(): v for k, v in headers}

        if method.upper() == "CONNECT":
            host, _, port = target.rpartition(":")
            rec = Record(0, t, "CONNECT", target, host.strip("[]"), int(port or 443), headers, status=403)
            self._add(rec, current)
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return False

        body = b""
        if "content-length" in hmap:
            n = int(hmap["content-length"])
            body = await reader.readexactly(n) if n else b""
        elif hmap.get("transfer-encoding", "").lower() == "chunked":
            body = await _read_chunked(reader)
        parts = urlsplit(target)
        host = (parts.hostname or "").lower()
        port = parts.port or 80
        rec = Record(0, t, method.upper(), target, host, port, headers, body[:BODY_LIMIT], len(body))
        self._add(rec, current)
        if host in LOOPBACK and port != self.port and port not in self.forward_ports:
            # not the test's server: refused like a port where nothing listens (a network error),
            # never forwarded to whatever process holds it
            rec.status = 0
            rec.done = True
            return False
        if host not in LOOPBACK or port == self.port:
            rec.status = 502
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return False
        await self._forward(rec, parts, headers, body, version, writer)
        return False  # one request per client connection: the answer is relayed until EOF

    async def _forward(
        self,
        rec: Record,
        parts: Any,
        headers: list[tuple[str, str]],
        body: bytes,
        version: str,
        writer: asyncio.StreamWriter,
    ) -> None:
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        try:
            up_r, up_w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", rec.port), 5)
        except (TimeoutError, OSError):
            rec.status = 0  # nothing listens: the client gets a network error, as without the tap
            return
        skip = {
            "proxy-connection",
            "connection",
            "keep-alive",
            "transfer-encoding",
            "content-length",
        }
        out = [f"{rec.method} {path} HTTP/1.1"]
        out += [f"{k}: {v}" for k, v in headers if k.lower() not in skip]
        out += [f"Content-Length: {len(body)}"] if body or rec.method in ("POST", "PUT", "PATCH") else []
        out += ["Connection: close", "", ""]
        up_w.write("\r\n".join(out).encode("latin-1") + body)
        await up_w.drain()
        rec.forwarded = True
        first = True
        try:
            while True:
                chunk = await asyncio.wait_for(up_r.read(65536), 60)
                if not chunk:
                    break
                if first:
                    first = False
                    try:
                        rec.status = int(chunk.split(b" ", 2)[1])
                    except (IndexError, ValueError):
                        rec.status = -1
                writer.write(chunk)
                await writer.drain()
        except TimeoutError:
            pass
        finally:
            up_w.close()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    while True:
        size_line = await reader.readline()
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            await reader.readline()
            return bytes(out)
        out += await reader.readexactly(size)
        await reader.readline()
