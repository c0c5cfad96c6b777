"""Run `python -m server ...` with every socket to anything but loopback refused (an audit hook,
installed before the server's first import). Each refused attempt is appended to the file named
by WHEREFROM_REFUSED. `--selftest` instead tries one non-loopback connect (0.0.0.0, which would
only ever reach this machine) and exits 0 if the hook refused it: the positive control."""

from __future__ import annotations

import ipaddress
import os
import runpy
import socket
import sys
from typing import Any

LOG = os.environ.get("WHEREFROM_REFUSED", "")


def _loopback(host: Any) -> bool:
    if host is None or host in ("localhost", b"localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.decode() if isinstance(host, bytes) else str(host).split("%")[0]).is_loopback
    except ValueError:
        return False  # a name other than localhost: resolving it would ask the network


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        address = args[1] if len(args) > 1 else None
        if isinstance(address, tuple) and address and not _loopback(address[0]):
            _refuse(event, address)
    elif event == "socket.getaddrinfo" and not _loopback(args[0]):
        _refuse(event, args[:2])


def _refuse(event: str, what: Any) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{event} {what!r}\n")
    raise PermissionError(f"refused by the loopback-only test hook: {event} {what!r}")


sys.addaudithook(_hook)

if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.connect(("0.0.0.0", 9))  # noqa: S104 - this machine only, and refused before the call
            except PermissionError:
                sys.exit(0)
        sys.exit(1)
    sys.argv = ["server", *sys.argv[1:]]
    runpy.run_module("server", run_name="__main__", alter_sys=True)
