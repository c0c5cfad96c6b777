"""GET /api/openapi.json, generated from the route declarations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

import server
from server import appkeys
from server.api import Api

api = Api()


def document(apis: Sequence[Api]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for spec in (s for a in apis for s in a.specs):
        op: dict[str, Any] = {
            "operationId": spec.handler.__name__,
            "summary": spec.summary,
            "responses": {
                str(spec.status): {"description": "success"},
                "4XX": {
                    "description": "error",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
                },
            },
        }
        for extra in spec.responses:
            op["responses"][str(extra)] = {"description": "success"}
        if not spec.auth:
            op["security"] = []
        if spec.query:
            required = set(spec.query.get("required", []))
            op["parameters"] = [
                {"name": name, "in": "query", "required": name in required, "schema": schema}
                for name, schema in spec.query.get("properties", {}).items()
            ]
        if spec.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {**spec.body, "additionalProperties": False}}},
            }
        paths.setdefault(spec.path, {})[spec.method.lower()] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "Wherefrom companion server", "version": server.__version__},
        "servers": [{"url": "http://127.0.0.1:37711"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {
                            "type": "object",
                            "required": ["code", "message"],
                            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                        }
                    },
                }
            },
        },
    }


@api.route("GET", "/api/openapi.json", summary="This API's OpenAPI 3.1 description")
async def openapi_json(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    apis: list[Api] = request.app[appkeys.ROUTE_APIS]
    return document(apis)


def markdown(apis: Sequence[Api]) -> str:
    """docs/api.md, generated from the same declarations (tests/test_docs.py keeps it current)."""
    from server.settings import SETTINGS

    lines = [
        "# HTTP API",
        "",
        "Generated from the route declarations by `python -m server.routes > docs/api.md`;",
        "the machine-readable form is `GET /api/openapi.json`. Every route but health needs",
        '`Authorization: Bearer <token>`. Errors: `{"error": {"code", "message"}}`.',
        "",
        "| method | path | what | body fields | query |",
        "|---|---|---|---|---|",
    ]
    doc = document(apis)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            req = set(body.get("required", []))
            fields = ", ".join(f"`{k}`" + ("" if k in req else "?") for k in body.get("properties", {}))
            query = ", ".join(f"`{p['name']}`" + ("" if p["required"] else "?") for p in op.get("parameters", []))
            lines.append(f"| {method.upper()} | `{path}` | {op['summary']} | {fields} | {query} |")
    lines += ["", "## Settings (`wherefrom serve`)", "", "| setting | default | meaning |", "|---|---|---|"]
    for name, (default, help_text) in SETTINGS.items():
        lines.append(f"| `{name}` | `{default!r}` | {help_text} |")
    return "\n".join(lines) + "\n"
