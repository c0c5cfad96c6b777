"""`wherefrom status`: exit 0 healthy, 2 reported unhealthy, 1 could not tell."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from server.commands.client import FAILED, OK, UNHEALTHY, Client, ServerUnavailable, error_message


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    status = sub.add_parser(
        "status", help="show the running server's health (exit 0 healthy, 2 reported unhealthy, 1 could not tell)"
    )
    common(status)
    status.set_defaults(func=cmd_status)


def meaning_line(m: dict[str, Any]) -> str:
    """One line on search by meaning (the embedder's progress in GET /api/health)."""
    line = _static_line(m)
    for key, name, without in (
        ("deep", "second model", "paraphrases are found less often"),
        ("third", "third voice", "items in other languages are found by their words only"),
    ):
        part = m.get(key)
        if isinstance(part, dict):
            line += "; " + _voice_part(part, name, without)
    return line


def _voice_part(d: dict[str, Any], name: str, without: str) -> str:
    state = d.get("state")
    if state == "building" and not d.get("pending") and str(d.get("scale", "")).startswith("taking"):
        return f"{name} ({d.get('model')}): building, the scale of its cosines: {d['scale'][len('taking, ') :]}"
    if state == "building":
        return f"{name} ({d.get('model')}): building, {d.get('pending', 0):,} items to go"
    if state == "ready":
        return f"{name} ({d.get('model')}): ready"
    if state == "failed":
        return f"{name}: stopped ({d.get('error')})"
    if state == "off":
        return f"{name}: {d.get('off', 'off')} ({without})"
    return f"{name}: {state}"


def _static_line(m: dict[str, Any]) -> str:
    state, pending, vectors = m.get("state"), m.get("pending", 0), m.get("vectors", 0)
    if state == "building":
        return f"search by meaning: building, {pending:,} items to go ({vectors:,} vectors so far)"
    if state == "ready":
        return f"search by meaning: ready ({vectors:,} vectors, model {m.get('model')})"
    if state == "failed":
        return f"search by meaning: stopped ({m.get('error')}); search by words works"
    return f"search by meaning: {state}"


def cmd_status(args: argparse.Namespace) -> int:
    client = Client.from_args(args, timeout=3)
    try:
        # without a token the server still answers, but without its build details
        code, body = client.request("GET", "/api/health", paired=False)
    except ServerUnavailable as err:
        print(f"wherefrom status: could not tell: {err}", file=sys.stderr)
        return FAILED
    if code != 200:
        print(f"unhealthy: {error_message(code, body)}")
        return UNHEALTHY
    if not isinstance(body, dict):
        print("could not tell: the health answer is not JSON")
        return FAILED
    print(json.dumps(body, indent=2))
    meaning = body.get("meaning")
    if isinstance(meaning, dict):
        print(meaning_line(meaning))
    if "build" not in body:
        print("could not tell: the token was not accepted, build details unavailable")
        return FAILED
    return OK if body.get("ok") else UNHEALTHY
