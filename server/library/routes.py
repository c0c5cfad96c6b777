"""HTTP: the library. Both add lanes call server.library.pipeline; reads go through queries."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server import appkeys, limits
from server.api import Api
from server.errors import BadRequest, NotFound
from server.library import pipeline, queries
from server.urls import MAX_URL_CHARS

api = Api()

MAX_HTML_CHARS = limits.PAGE_HTML_CHARS
MAX_TEXT_CHARS = limits.PAGE_TEXT_CHARS
MAX_TITLE_CHARS = limits.TITLE_CHARS
# JSON escapes can make a character take up to 12 bytes (a surrogate pair as \uXXXX\uXXXX);
# the character caps in the schema are the real limit, this only bounds what is read.
ADD_TEXT_MAX_BODY = 24 * 1024 * 1024
URL = {"type": "string", "minLength": 1, "maxLength": MAX_URL_CHARS}


@api.route(
    "POST",
    "/api/library/add_text",
    summary="Save a page's HTML or text (the extension's 'Add this page')",
    body={
        "type": "object",
        "properties": {
            "url": URL,
            "title": {"type": "string", "maxLength": MAX_TITLE_CHARS},
            "html": {"type": "string", "maxLength": MAX_HTML_CHARS},
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
        },
        "required": ["url", "title"],
    },
    max_body=ADD_TEXT_MAX_BODY,
    status=201,
    responses=(200, 201, 403, 413, 422),
)
async def add_text(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    html, text = body.get("html"), body.get("text")
    if not (html and html.strip()) and not (text and text.strip()):
        raise BadRequest("send the page as html or text", code="missing_field", field="body.html")
    result = await pipeline.save_page(
        request.app[appkeys.STORE],
        request.app[appkeys.PROBE_CACHE],
        request.app[appkeys.POLICY],
        url=body["url"],
        title=body["title"],
        html=html,
        text=text,
        lane="text",
    )
    return result.status, result.body()


@api.route(
    "POST",
    "/api/library/add_url",
    summary="Fetch a page and save it to the library",
    body={"type": "object", "properties": {"url": URL}, "required": ["url"]},
    max_body=16 * 1024,
    status=201,
    responses=(200, 201, 403, 422, 502),
)
async def add_url(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    result = await pipeline.add_url(
        request.app[appkeys.STORE],
        request.app[appkeys.PROBE_CACHE],
        request.app[appkeys.POLICY],
        body["url"],
        allow_private=request.app[appkeys.SETTINGS].allow_private_fetch,
    )
    return result.status, result.body()


@api.route(
    "GET",
    "/api/library",
    summary="Saved documents with provenance, newest first",
    query={"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 500}}},
)
async def list_documents(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    docs = await queries.list_documents(request.app[appkeys.STORE], query.get("limit", 50))
    return {"documents": docs}


def _doc_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise BadRequest("document id must be a positive integer", code="bad_type", field="path.id")
    return int(raw)


@api.route("GET", "/api/library/{id}", summary="One document with its full text and chunk count", responses=(400, 404))
async def get_document(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    doc = await queries.get_document(request.app[appkeys.STORE], _doc_id(request), full_text=True)
    if doc is None:
        raise NotFound("no such document")
    return {"document": doc}


@api.route(
    "DELETE", "/api/library/{id}", summary="Remove a document, its chunks and their index entries", responses=(400, 404)
)
async def delete_document(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    removed = await pipeline.delete_document(
        request.app[appkeys.STORE], request.app[appkeys.PROBE_CACHE], _doc_id(request)
    )
    if removed is None:
        raise NotFound("no such document")
    return removed
