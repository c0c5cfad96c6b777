"""HTTP: the policy snapshot and per-site rules."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from server import appkeys
from server.api import Api
from server.governance.resolver import MODES

api = Api()
HOST = {"type": "string", "minLength": 1, "maxLength": 300}


@api.route("GET", "/api/policy", summary="Policy snapshot the extension resolves modes from")
async def get_policy(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await request.app[appkeys.POLICY].snapshot()


@api.route(
    "GET",
    "/api/site-mode",
    summary="The mode of one host, with its reason",
    query={"type": "object", "properties": {"host": HOST}, "required": ["host"]},
)
async def get_site_mode(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    res = await request.app[appkeys.POLICY].mode_for(query["host"])
    return res.as_dict()


@api.route(
    "PUT",
    "/api/site-mode",
    summary="Set the mode of a site and its subdomains",
    body={
        "type": "object",
        "properties": {"host": HOST, "mode": {"type": "string", "enum": list(MODES)}},
        "required": ["host", "mode"],
    },
    max_body=4096,
)
async def put_site_mode(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return await request.app[appkeys.POLICY].put_rule(body["host"], body["mode"])


@api.route(
    "DELETE",
    "/api/site-mode",
    summary="Remove the rule of a site",
    query={"type": "object", "properties": {"host": HOST}, "required": ["host"]},
)
async def delete_site_mode(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    return {"removed": await request.app[appkeys.POLICY].delete_rule(query["host"])}
