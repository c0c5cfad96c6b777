"""Routes declared as data: method, path, body and query schemas, body limit, auth.

One declaration feeds three things: the aiohttp route table, request validation (unknown
fields, wrong types, missing fields -> 400 before a handler runs) and the OpenAPI document
(GET /api/openapi.json). Schemas are a small subset of JSON Schema: type, properties,
required, items, enum, minLength/maxLength (characters), minimum/maximum, maxItems.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from server import appkeys
from server.errors import BadRequest, PayloadTooLarge, RequestTimeout, UnsupportedMediaType

Json = dict[str, Any]
Handler = Callable[[web.Request, Json, Json], Awaitable[Any]]

DEFAULT_MAX_BODY = 64 * 1024
MAX_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclasses.dataclass(frozen=True)
class RouteSpec:
    method: str
    path: str
    handler: Handler
    summary: str
    body: Json | None = None
    query: Json | None = None
    max_body: int = DEFAULT_MAX_BODY
    auth: bool = True
    status: int = 200
    responses: tuple[int, ...] = ()


class Api:
    """A collection of RouteSpecs; `Api.table()` gives aiohttp routes."""

    def __init__(self) -> None:
        self.specs: list[RouteSpec] = []

    def route(
        self,
        method: str,
        path: str,
        *,
        summary: str,
        body: Json | None = None,
        query: Json | None = None,
        max_body: int = DEFAULT_MAX_BODY,
        auth: bool = True,
        status: int = 200,
        responses: tuple[int, ...] = (),
    ) -> Callable[[Handler], Handler]:
        def deco(fn: Handler) -> Handler:
            self.specs.append(RouteSpec(method, path, fn, summary, body, query, max_body, auth, status, responses))
            return fn

        return deco

    def table(self) -> list[web.RouteDef]:
        return [web.route(s.method, s.path, _wrap(s)) for s in self.specs]


def _wrap(spec: RouteSpec) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def handle(request: web.Request) -> web.StreamResponse:
        body: Json = {}
        if spec.body is not None:
            body = await read_json(request, spec.max_body)
            validate(body, spec.body, "body")
        elif request.can_read_body and request.method in ("POST", "PUT", "PATCH"):
            raise BadRequest("this route takes no body")
        query = parse_query(request, spec.query or {"type": "object", "properties": {}})
        result = await spec.handler(request, body, query)
        if isinstance(result, web.StreamResponse):
            return result
        if isinstance(result, tuple):
            status, payload = result
            return web.json_response(payload, status=status)
        return web.json_response(result, status=spec.status)

    handle.__name__ = spec.handler.__name__
    handle.__wherefrom_spec__ = spec  # type: ignore[attr-defined]  # the route table reads the spec back off the handler
    return handle


async def read_json(request: web.Request, max_body: int) -> Json:
    ctype = request.content_type
    if ctype != "application/json":
        raise UnsupportedMediaType("send JSON with Content-Type: application/json")
    if request.content_length is not None and request.content_length > max_body:
        raise PayloadTooLarge(f"body larger than {max_body} bytes", limit=max_body)
    raw = await read_capped(request, max_body)
    request[appkeys.RAW_BODY] = raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body is not valid UTF-8", code="bad_json") from None
    try:
        value = strict_json(text)
    except (ValueError, RecursionError):
        raise BadRequest("body is not valid JSON", code="bad_json") from None
    if json_depth(value) > MAX_DEPTH:
        raise BadRequest("JSON nested too deeply", code="bad_json")
    if not isinstance(value, dict):
        raise BadRequest("body must be a JSON object", code="bad_json")
    return value


BODY_IDLE_SECONDS = 30.0  # a body that sends nothing for this long is given up (408, connection closed)


async def read_capped(request: web.Request, max_body: int) -> bytes:
    """The whole body, or 413 as soon as it passes `max_body` (chunked bodies included), or 408
    when it stops arriving for BODY_IDLE_SECONDS (a half-sent body never holds a handler)."""
    parts: list[bytes] = []
    total = 0
    while True:
        try:
            async with asyncio.timeout(BODY_IDLE_SECONDS):
                chunk = await request.content.read(64 * 1024)
        except TimeoutError:
            raise RequestTimeout(f"the body stopped arriving for {BODY_IDLE_SECONDS:g} s") from None
        if not chunk:
            return b"".join(parts)
        total += len(chunk)
        if total > max_body:
            raise PayloadTooLarge(f"body larger than {max_body} bytes", limit=max_body)
        parts.append(chunk)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """json.loads without Python's extensions: NaN, Infinity and -Infinity are refused (ValueError)."""
    return json.loads(text, parse_constant=_no_constant)


def json_depth(value: Any) -> int:
    """How deep the value nests (a scalar: 1), counted up to MAX_DEPTH + 1: level by level."""
    depth, level = 0, [value]
    while level and depth <= MAX_DEPTH:
        depth += 1
        below: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                below.extend(item.values())
            elif isinstance(item, list):
                below.extend(item)
        level = below
    return depth


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


_NUMBERS = ("integer", "number")
# a place in a value: its name, or (the place it is in, a key or an index), named only on error
Where = str | tuple[Any, str | int]


def _name(where: Where) -> str:
    if isinstance(where, str):
        return where
    parent, part = where
    return f"{_name(parent)}.{part}" if isinstance(part, str) else f"{_name(parent)}[{part}]"


def validate(value: Any, schema: Json, where: str) -> None:
    """Raise BadRequest naming the first place `value` breaks `schema`."""
    _validate(value, schema, where)


def _type_ok(value: Any, name: str) -> bool:
    return isinstance(value, _PY_TYPES[name]) and not (name in _NUMBERS and isinstance(value, bool))


def _validate(value: Any, schema: Json, at: Where) -> None:
    types = schema.get("type")
    if types is not None:
        ok = _type_ok(value, types) if isinstance(types, str) else any(_type_ok(value, t) for t in types)
        if not ok:
            names = types if isinstance(types, list) else [types]
            where = _name(at)
            raise BadRequest(f"{where} must be {' or '.join(names)}", code="bad_type", field=where)
    if isinstance(value, float) and not math.isfinite(value):
        where = _name(at)
        raise BadRequest(f"{where} must be a finite number", code="bad_value", field=where)
    if "enum" in schema and value not in schema["enum"]:
        where = _name(at)
        raise BadRequest(f"{where} must be one of {schema['enum']}", code="bad_value", field=where)
    if isinstance(value, str):
        _check_string(value, schema, at)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_range(value, schema, at)
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            where = _name(at)
            raise PayloadTooLarge(f"{where} has more than {schema['maxItems']} items", field=where)
        if "minItems" in schema and len(value) < schema["minItems"]:
            where = _name(at)
            raise BadRequest(f"{where} needs at least {schema['minItems']} items", code="bad_value", field=where)
        items = schema.get("items", {})
        for i, item in enumerate(value):
            _validate(item, items, (at, i))
    if isinstance(value, dict) and ("properties" in schema or types == "object"):
        props = schema.get("properties", {})
        for key in value:
            if key not in props:
                where = _name(at)
                raise BadRequest(f"unknown field {where}.{key}", code="unknown_field", field=f"{where}.{key}")
        for key in schema.get("required", []):
            if key not in value:
                where = _name(at)
                raise BadRequest(f"missing field {where}.{key}", code="missing_field", field=f"{where}.{key}")
        for key, sub in props.items():
            if key in value:
                _validate(value[key], sub, (at, key))


def _check_range(value: float, schema: Json, at: Where) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        where = _name(at)
        raise BadRequest(f"{where} below {schema['minimum']}", code="bad_value", field=where)
    if "maximum" in schema and value > schema["maximum"]:
        where = _name(at)
        raise BadRequest(f"{where} above {schema['maximum']}", code="bad_value", field=where)


def _check_string(value: str, schema: Json, at: Where) -> None:
    if "\x00" in value:
        where = _name(at)
        raise BadRequest(f"{where} contains a NUL character", code="bad_value", field=where)
    if not value.isascii() and _SURROGATE.search(value):
        where = _name(at)
        raise BadRequest(f"{where} contains a lone surrogate (not a character)", code="bad_value", field=where)
    if len(value) < schema.get("minLength", 0):
        where = _name(at)
        raise BadRequest(f"{where} is empty or too short", code="bad_value", field=where)
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        where = _name(at)
        raise PayloadTooLarge(
            f"{where} longer than {schema['maxLength']} characters", field=where, limit=schema["maxLength"]
        )


def parse_query(request: web.Request, schema: Json) -> Json:
    """Query strings are text; coerce to the declared types and validate like a body."""
    props: Json = schema.get("properties", {})
    out: Json = {}
    for key in request.query:
        if key not in props:
            raise BadRequest(f"unknown query parameter {key}", code="unknown_field", field=f"query.{key}")
        values = request.query.getall(key)
        if len(values) > 1:
            raise BadRequest(f"query parameter {key} given more than once", code="bad_value", field=f"query.{key}")
        out[key] = _coerce(values[0], props[key], key)
    validate(out, {**schema, "type": "object"}, "query")
    return out


def _coerce(raw: str, schema: Json, key: str) -> Any:
    kind = schema.get("type", "string")
    if kind == "integer":
        try:
            return int(raw, 10)
        except ValueError:
            raise BadRequest(f"query.{key} must be an integer", code="bad_type", field=f"query.{key}") from None
    if kind == "boolean":
        if raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
        raise BadRequest(f"query.{key} must be true or false", code="bad_type", field=f"query.{key}")
    return raw
