"""HTTP: the import of a chat export (or our own JSON export) and the export's paged reader."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server import appkeys
from server.api import Api
from server.dataio import checks, export, importer, schema

api = Api()

MAX_BATCH_BODY = 8 * 1024 * 1024 - 1024  # the CLI cuts batches at half this
IMPORT_BODY = {
    "type": "object",
    "properties": {
        "import_id": {"type": "string", "minLength": 1, "maxLength": 100},
        "source": {"type": "string", "enum": list(importer.SOURCES)},
        "conversations": {"type": "array", "items": schema.CONVERSATION, "maxItems": 1000},
        "continued": {"type": "boolean"},
        "facts": {"type": "array", "items": schema.FACT, "maxItems": 5000},
        "documents": {"type": "array", "items": schema.DOCUMENT, "maxItems": 200},
        "skipped": {
            "type": "array",
            "maxItems": 200,
            "items": {
                "type": "object",
                "required": ["reason", "count"],
                "properties": {
                    "reason": {"type": "string", "minLength": 1, "maxLength": 200},
                    "count": {"type": "integer", "minimum": 0},
                },
            },
        },
    },
    "required": ["import_id", "source"],
}


@api.route(
    "POST",
    "/api/import",
    summary="Import one batch of a chat export or a Wherefrom export (collect hosts only)",
    body=IMPORT_BODY,
    max_body=MAX_BATCH_BODY,
    responses=(400, 413),
)
async def post_import(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    checks.content_checks(body.get("conversations", []), body.get("facts", []), body.get("documents", []), "body")
    app = request.app
    app[appkeys.EMBEDDER].defer()  # more batches are coming: their writes before the vectors
    try:
        return await importer.import_batch(app[appkeys.STORE], app[appkeys.PROBE_CACHE], app[appkeys.POLICY], body)
    finally:
        app[appkeys.EMBEDDER].defer()  # the hold counts from the end of a long batch too


@api.route(
    "GET",
    "/api/export",
    summary="One page of everything visible, for `wherefrom export` (schema: docs/export.schema.json)",
    query={
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(export.KINDS)},
            "after": {"type": "integer", "minimum": 0},
            "site": {"type": "string", "minLength": 1, "maxLength": 300},
            "since": {"type": "string", "minLength": 10, "maxLength": 10},
            "include_off": {"type": "boolean"},
        },
        "required": ["kind"],
    },
)
async def get_export(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    scope = export.scope_from_query(query)
    return await export.export_page(request.app[appkeys.STORE], query["kind"], scope, query.get("after", 0))
