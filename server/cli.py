"""`wherefrom` command line: serve, pair, status (and library commands from server.library.cli)."""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import json
import logging
import sys
import urllib.error
import urllib.request

from server.settings import Settings, add_arguments, default_data_dir
from server.token import load_or_create


def _common(p: argparse.ArgumentParser) -> None:
    add_arguments(p, ("data_dir", "port"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wherefrom", description="Wherefrom companion server")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the companion server on 127.0.0.1")
    add_arguments(serve)
    serve.add_argument("--force-bind", action="store_true", help="allow a non-loopback --host (unsafe)")
    pair = sub.add_parser("pair", help="print the token to paste into the extension's Settings")
    add_arguments(pair, ("data_dir",))
    status = sub.add_parser("status", help="exit 0 healthy, 2 reported unhealthy, 1 could not tell")
    _common(status)
    # subcommands that talk to the running server, each in its own module
    modules = ("server.library.cli", "server.dataio.cli", "server.search_cli", "server.mcp_server")
    for module in (*modules, "server.nativehost.cli"):
        importlib.import_module(module).add_commands(sub, _common)
    return parser


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.force_bind:
        print(f"refusing to bind {args.host}: not a loopback address (use --force-bind to insist)", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_args(args)
    from server import serving
    from server.app import create_app
    from server.instance import AlreadyRunning, Claim
    from server.store.db import StoreError

    try:
        with Claim(settings.data_dir) as claim:
            app = create_app(settings)
            claim.announce(args.host, args.port)
            print(f"wherefrom: serving http://{args.host}:{args.port}  data {settings.data_dir}", flush=True)
            print("  pair the extension: open its side panel (see `wherefrom install-browser-link`)", flush=True)
            serving.run(app, args.host, args.port)
    except AlreadyRunning as err:
        print(f"wherefrom: {err}", file=sys.stderr)
        return 1
    except StoreError as err:
        print(f"wherefrom: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"wherefrom: cannot listen on {args.host}:{args.port}: {err}", file=sys.stderr)
        return 1
    return 0


def cmd_pair(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    print(load_or_create(data_dir / "token"))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    token_path = data_dir / "token"
    req = urllib.request.Request(f"http://127.0.0.1:{args.port}/api/health")
    if token_path.exists():
        req.add_header("Authorization", "Bearer " + token_path.read_text("ascii").strip())
    try:
        with urllib.request.urlopen(req, timeout=3) as resp:  # noqa: S310 - fixed loopback URL
            body = json.loads(resp.read())
    except urllib.error.HTTPError as err:
        print(f"unhealthy: HTTP {err.code}")
        return 2
    except (OSError, ValueError) as err:
        print(f"could not tell: {err}")
        return 1
    print(json.dumps(body, indent=2))
    if "build" not in body:
        print("could not tell: the token was not accepted, build details unavailable")
        return 1
    return 0 if body.get("ok") else 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"serve": cmd_serve, "pair": cmd_pair, "status": cmd_status}.get(args.command)
    if handler is None:
        return int(args.func(args))
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
