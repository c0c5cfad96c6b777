"""`wherefrom search QUERY [--limit N] [--json]`: search the memory through the RUNNING server.

The same request as the side panel's search (GET /api/search), so the same ranking and the
same visibility rule; results are printed with their provenance by server.resultformat.
Exit 0 with results or none, 1 when the server cannot be reached or refuses the request.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from server.localclient import LocalClient, ServerUnavailable, error_message
from server.resultformat import provenance, results_text

DEFAULT_LIMIT = 20  # what the panel asks for


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("search", help="search what is remembered (through the running server)")
    common(p)
    p.add_argument("query", metavar="QUERY", help="words or a sentence")
    p.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"most results (1-100, default {DEFAULT_LIMIT})")
    p.add_argument("--json", action="store_true", help="print the results as JSON (one object, `results`)")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    client = LocalClient(args.port, args.data_dir)
    try:
        status, body = client.get("/api/search", q=args.query, limit=args.limit)
    except ServerUnavailable as err:
        print(f"wherefrom search: {err}", file=sys.stderr)
        return 1
    if status != 200 or not isinstance(body, dict):
        print(f"wherefrom search: {error_message(status, body)}", file=sys.stderr)
        return 1
    results: list[dict[str, Any]] = body.get("results", [])
    if args.json:
        print(
            json.dumps({"query": args.query, "results": [provenance(r) for r in results]}, ensure_ascii=False, indent=2)
        )
    else:
        print(results_text(args.query, results))
    return 0
