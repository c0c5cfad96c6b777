"""`wherefrom status`: exit 0 healthy, 2 reported unhealthy, 1 could not tell."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from server.commands.client import FAILED, OK, UNHEALTHY, Client, ServerUnavailable, error_message


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    status = sub.add_parser("status", help="exit 0 healthy, 2 reported unhealthy, 1 could not tell")
    common(status)
    status.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace) -> int:
    client = Client.from_args(args, timeout=3)
    try:
        # without a token the server still answers, but without its build details
        code, body = client.request("GET", "/api/health", paired=False)
    except ServerUnavailable as err:
        print(f"could not tell: {err}")
        return FAILED
    if code != 200:
        print(f"unhealthy: {error_message(code, body)}")
        return UNHEALTHY
    if not isinstance(body, dict):
        print("could not tell: the health answer is not JSON")
        return FAILED
    print(json.dumps(body, indent=2))
    if "build" not in body:
        print("could not tell: the token was not accepted, build details unavailable")
        return FAILED
    return OK if body.get("ok") else UNHEALTHY
