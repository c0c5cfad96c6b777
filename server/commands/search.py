"""`wherefrom search QUERY [--limit N] [--json]`: search the memory through the RUNNING server.

The same request as the side panel's search (GET /api/search), so the same ranking and the
same visibility rule; results are printed with their provenance by server.resultformat.
Exit 0 with results or none, 1 when the server cannot be reached or refuses the request.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from server import limits
from server.commands.client import Client, CommandError, error_message, fail
from server.resultformat import for_terminal, json_for_terminal, provenance, results_text

DEFAULT_LIMIT = 20  # what the panel asks for


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("search", help="search what is remembered (through the running server)")
    common(p)
    p.add_argument("query", metavar="QUERY", help="words or a sentence")
    p.add_argument(
        "--limit",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"most results (1-{limits.SEARCH_RESULTS}, default {DEFAULT_LIMIT})",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON (one object, `results`)")
    p.set_defaults(func=cmd_search)


def _limit(text: str) -> int:
    """--limit as the server takes it, refused here in the option's own words (not the route's)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= n <= limits.SEARCH_RESULTS:
        raise argparse.ArgumentTypeError(f"{n} is out of range: give 1 to {limits.SEARCH_RESULTS}")
    return n


def cmd_search(args: argparse.Namespace) -> int:
    client = Client.from_args(args)
    try:
        status, body = client.get("/api/search", q=args.query, limit=args.limit)
    except CommandError as err:
        return fail("search", err)
    if status != 200 or not isinstance(body, dict):
        return fail("search", error_message(status, body))
    results: list[dict[str, Any]] = body.get("results", [])
    if args.json:
        answer: dict[str, Any] = {
            "query": args.query,
            "close": body.get("close", True),
            "judged": body.get("judged", True),
            "results": [provenance(r) for r in results],
        }
        if body.get("note"):
            answer["note"] = body["note"]
        if isinstance(body.get("meaning"), dict) and body["meaning"].get("hint"):
            answer["meaning"] = {k: body["meaning"][k] for k in ("building", "hint")}
        print(json_for_terminal(json.dumps(answer, ensure_ascii=False, indent=2)))
    else:
        print(for_terminal(results_text(args.query, results, body.get("meaning"), body.get("note"))))
    return 0
