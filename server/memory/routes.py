"""HTTP: facts (notes, clips, captures), page match and probe, search, forget, activity."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server import appkeys, limits
from server.api import Api
from server.errors import BadRequest, NotFound
from server.memory import activity_log, captures, facts, forget, pagematch, ranking, threads
from server.render import conversation as render_conversation

api = Api()

URL = {"type": "string", "minLength": 1, "maxLength": 4096}
TITLE = {"type": "string", "maxLength": limits.TITLE_CHARS}  # then cut to facts.MAX_TITLE_CHARS
HOST = {"type": "string", "minLength": 1, "maxLength": 300}
FACT_PROPERTIES: dict[str, object] = {
    "url": URL,
    "title": TITLE,
    "text": {"type": "string", "minLength": 1, "maxLength": facts.MAX_TEXT_CHARS},
}
FACT_BODY = {"type": "object", "properties": FACT_PROPERTIES, "required": ["url", "text"]}
NOTE_BODY = {
    **FACT_BODY,
    "properties": {
        **FACT_PROPERTIES,
        "valid_day": {"type": "string", "minLength": 10, "maxLength": 10},
        "via": {"type": "string", "enum": list(facts.VIA), "description": "written by an agent (MCP), not the person"},
    },
}
# 20,000 characters may be 4 bytes each, or 12 as JSON \ud83e\uddea escapes
FACT_MAX_BODY = 12 * facts.MAX_TEXT_CHARS + 64 * 1024


@api.route(
    "POST",
    "/api/notes",
    summary="Keep a note about a page (collect hosts only)",
    body=NOTE_BODY,
    max_body=FACT_MAX_BODY,
    status=201,
    responses=(400, 403, 413),
)
async def post_note(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    fact_id = await facts.write_fact(
        request.app[appkeys.STORE],
        request.app[appkeys.PROBE_CACHE],
        request.app[appkeys.POLICY],
        kind="note",
        url=body["url"],
        title=body.get("title", ""),
        text=body["text"],
        valid_day=body.get("valid_day"),
        via=body.get("via"),
    )
    return {"id": fact_id}


@api.route(
    "POST",
    "/api/clips",
    summary="Keep a selection from a page (collect hosts only; URL required)",
    body=FACT_BODY,
    max_body=FACT_MAX_BODY,
    status=201,
    responses=(400, 403, 413),
)
async def post_clip(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    fact_id = await facts.write_fact(
        request.app[appkeys.STORE],
        request.app[appkeys.PROBE_CACHE],
        request.app[appkeys.POLICY],
        kind="clip",
        url=body["url"],
        title=body.get("title", ""),
        text=body["text"],
    )
    return {"id": fact_id}


TURN = {
    "type": "object",
    "properties": {
        "role": {"type": "string", "enum": list(captures.ROLES)},
        "text": {"type": "string", "minLength": 1, "maxLength": captures.MAX_TURN_CHARS},
        # GFM of the same turn (code fenced, tables, lists, math as TeX); stored beside the text
        "markdown": {"type": ["string", "null"], "maxLength": captures.MAX_MARKDOWN_CHARS},
        "native_id": {"type": ["string", "null"], "maxLength": 500},
    },
    "required": ["role", "text"],
}


@api.route(
    "POST",
    "/api/captures",
    summary="Upsert a captured chat conversation (collect hosts only)",
    body={
        "type": "object",
        "properties": {
            "url": URL,
            "title": TITLE,
            "site": {"type": "string", "maxLength": 100},
            "turns": {"type": "array", "items": TURN, "minItems": 1, "maxItems": captures.MAX_TURNS},
        },
        "required": ["url", "turns"],
    },
    max_body=captures.MAX_BODY,
    responses=(400, 403, 413),
)
async def post_capture(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await captures.upsert(
        request.app[appkeys.STORE],
        request.app[appkeys.PROBE_CACHE],
        request.app[appkeys.POLICY],
        url=body["url"],
        title=body.get("title", ""),
        site=body.get("site", ""),
        turns=body["turns"],
    )


@api.route(
    "GET",
    "/api/conversations",
    summary="The turns shown of a page's conversation, with dates and versions (versions=true: the others too)",
    query={
        "type": "object",
        "properties": {"url": URL, "site": {"type": "string", "maxLength": 100}, "versions": {"type": "boolean"}},
        "required": ["url"],
    },
)
async def get_conversations(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await threads.conversation_turns(
        request.app[appkeys.STORE], query["url"], query.get("site"), with_versions=bool(query.get("versions"))
    )


@api.route(
    "GET",
    "/api/conversations/markdown",
    summary="A page's conversation as the export's Markdown file (start/offset/max_chars: one page of it)",
    query={
        "type": "object",
        "properties": {
            "url": URL,
            "site": {"type": "string", "maxLength": 100},
            "start": {"type": "integer", "minimum": 0, "maximum": captures.MAX_TURNS * 1000},
            "max_chars": {"type": "integer", "minimum": 1000, "maximum": 10_000_000},
            "offset": {"type": "integer", "minimum": 0, "maximum": limits.MARKDOWN_CHARS * 2},
        },
        "required": ["url"],
    },
    responses=(400, 404),
)
async def get_conversation_markdown(
    request: web.Request, body: dict[str, Any], query: dict[str, Any]
) -> dict[str, Any]:
    item = await threads.conversation_item(request.app[appkeys.STORE], query["url"], query.get("site"))
    if item is None:
        raise NotFound("no conversation is stored for this page")
    try:
        out = render_conversation.page(item, query.get("start", 0), query.get("max_chars"), query.get("offset", 0))
    except render_conversation.OffsetPastTurn as err:
        raise BadRequest(str(err), code="bad_offset") from None
    return {"url": item["url"], "title": render_conversation.title_of(item), "site": item["site"], **out}


@api.route(
    "GET",
    "/api/page-match",
    summary="Memory about a page in four tiers (empty for an off host)",
    query={
        "type": "object",
        "properties": {
            "url": URL,
            "title": TITLE,
            "description": {"type": "string", "maxLength": pagematch.DESCRIPTION_CHARS},
        },
        "required": ["url"],
    },
)
async def get_page_match(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    app = request.app
    return await pagematch.page_match(
        app[appkeys.STORE],
        app[appkeys.POLICY],
        query["url"],
        query.get("title", ""),
        description=query.get("description", ""),
        embedder=app[appkeys.EMBEDDER],
    )


@api.route(
    "GET",
    "/api/page-probe",
    summary="Counts behind the green icon (cached 30 s per page; empty for off)",
    query={"type": "object", "properties": {"url": URL}, "required": ["url"]},
)
async def get_page_probe(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await pagematch.page_probe(
        request.app[appkeys.STORE], request.app[appkeys.PROBE_CACHE], request.app[appkeys.POLICY], query["url"]
    )


@api.route(
    "GET",
    "/api/search",
    summary="Search every kind of item by its words and by meaning (fused; each result says why)",
    query={
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1, "maxLength": 4_000},
            "limit": {"type": "integer", "minimum": 1, "maximum": limits.SEARCH_RESULTS},
            "lanes": {"type": "string", "enum": list(ranking.LANES)},
        },
        "required": ["q"],
    },
)
async def get_search(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    q: str = query["q"]
    if not q.strip():
        raise BadRequest("q is empty", code="bad_value", field="query.q")
    app = request.app
    limit, lanes = query.get("limit", 20), query.get("lanes", "both")
    return await ranking.search(app[appkeys.STORE], app[appkeys.EMBEDDER], q, limit, lanes)


@api.route(
    "POST",
    "/api/forget",
    summary="Forget a site: a dry run with counts and its saved pages, then apply with its confirmation "
    "and the choice for the saved pages (documents: keep or forget, required when it has any)",
    body={
        "type": "object",
        "properties": {
            "host": HOST,
            "dry_run": {"type": "boolean"},
            "confirm": {"type": "string", "minLength": 1, "maxLength": 200},
            "documents": {"type": "string", "enum": [forget.KEEP, forget.FORGET]},
        },
        "required": ["host"],
    },
    max_body=4096,
    responses=(400, 409),
)
async def post_forget(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    store, confirmations = request.app[appkeys.STORE], request.app[appkeys.FORGET_CONFIRMATIONS]
    if body.get("dry_run"):
        if "confirm" in body or "documents" in body:
            raise BadRequest("a dry run takes no confirm and no documents choice", code="bad_value")
        return await forget.dry_run(store, confirmations, body["host"])
    if "confirm" not in body:
        raise BadRequest(
            "send dry_run: true first, then the confirm it answered", code="missing_field", field="body.confirm"
        )
    return await forget.apply(
        store, request.app[appkeys.PROBE_CACHE], confirmations, body["host"], body["confirm"], body.get("documents")
    )


@api.route(
    "POST",
    "/api/forget/undo",
    summary="Undo a forget batch",
    body={
        "type": "object",
        "properties": {"batch": {"type": "string", "minLength": 1, "maxLength": 200}},
        "required": ["batch"],
    },
    max_body=4096,
    responses=(400, 404),
)
async def post_forget_undo(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await forget.undo(request.app[appkeys.STORE], request.app[appkeys.PROBE_CACHE], body["batch"])


@api.route(
    "GET",
    "/api/activity",
    summary="The activity log, newest first",
    query={"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 500}}},
)
async def get_activity(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return {"activity": await activity_log.recent(request.app[appkeys.STORE], query.get("limit", 50))}
