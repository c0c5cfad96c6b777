"""The one JSON shape of Wherefrom's data out and back in.

`EXPORT` is the JSON Schema of `wherefrom export --format json`; `document()` writes it out as
docs/export.schema.json, and tests/test_docs.py checks that file is current.
`wherefrom import-chats` reads that file back; the import route takes the same items in
batches (`BATCH`). The request validator (server.api.validate) enforces the subset of JSON
Schema used here; every object is closed (additionalProperties false).
"""

from __future__ import annotations

from typing import Any

from server import ages, limits

FORMAT = "wherefrom-export"
VERSION = 1

Json = dict[str, Any]


def _obj(props: Json, required: list[str], description: str) -> Json:
    return {
        "type": "object",
        "description": description,
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


URL = {"type": "string", "minLength": 1, "maxLength": 4096}
TITLE = {"type": "string", "maxLength": limits.TITLE_CHARS}
TIME = {
    "type": "number",
    "minimum": ages.MIN_TIME,
    "maximum": ages.MAX_TIME,
    "description": "Unix seconds (1970 to 9999)",
}
OPT_TIME = {
    "type": ["number", "null"],
    "minimum": ages.MIN_TIME,
    "maximum": ages.MAX_TIME,
    "description": "Unix seconds (1970 to 9999), or null when unknown",
}
GRANULARITY = {
    "type": "string",
    "enum": ["instant", "day"],
    "description": "day: only the date of valid_at is meaningful (local noon is stored)",
}
OPT_TEXT = {"type": ["string", "null"], "maxLength": 4096}

TURN = _obj(
    {
        "role": {"type": "string", "enum": ["user", "assistant", "system", "tool"]},
        "text": {"type": "string", "minLength": 1, "maxLength": limits.TURN_CHARS},
        "markdown": {
            "type": ["string", "null"],
            "maxLength": limits.MARKDOWN_CHARS,
            "description": "the message as GFM (code fenced, tables, math as TeX); null: its text is all there is",
        },
        "native_id": {"type": ["string", "null"], "maxLength": 500, "description": "the service's message id"},
        "valid_at": TIME,
        "granularity": GRANULARITY,
        "position": {
            "type": "integer",
            "description": "its place in the conversation; several messages at one place are versions of one turn",
        },
        "shown": {"type": "boolean", "description": "false: a version the conversation does not show (default true)"},
    },
    ["role", "text", "valid_at", "granularity"],
    "one message (one version of a turn), at its own time",
)

CONVERSATION = _obj(
    {
        "url": URL,
        "site": {"type": "string", "maxLength": 100, "description": "the chat site's registry id (chatgpt, claude...)"},
        "title": TITLE,
        "created_at": OPT_TIME,
        "native_id": {"type": ["string", "null"], "maxLength": 500, "description": "the service's conversation id"},
        "turns": {"type": "array", "items": TURN},
    },
    ["url", "site", "title", "turns"],
    "a conversation at its page, turns in order",
)

FACT = _obj(
    {
        "kind": {"type": "string", "enum": ["note", "clip"]},
        "url": URL,
        "title": TITLE,
        "text": {"type": "string", "minLength": 1, "maxLength": limits.NOTE_CHARS},
        "valid_at": TIME,
        "granularity": GRANULARITY,
        "via": {"type": "string", "enum": ["mcp"], "description": "written by an agent (MCP), not the person"},
    },
    ["kind", "url", "title", "text", "valid_at", "granularity"],
    "a note or a clip about a page",
)

DOCUMENT = _obj(
    {
        "url": URL,
        "given_url": URL,
        "canonical_url": OPT_TEXT,
        "title": TITLE,
        "author": OPT_TEXT,
        "published": OPT_TEXT,
        "sitename": OPT_TEXT,
        "language": OPT_TEXT,
        "text": {"type": "string", "minLength": 1, "maxLength": limits.PAGE_TEXT_CHARS},
        "lane": {"type": "string", "enum": ["url", "text"]},
        "extractor": {"type": "string", "enum": ["trafilatura", "fallback", "text"]},
        "created_at": TIME,
        "updated_at": TIME,
    },
    ["url", "given_url", "title", "text", "lane", "extractor", "created_at", "updated_at"],
    "a saved library page with its readable text",
)

EXPORT: Json = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://wherefrom.invalid/export.schema.json",
    "title": "Wherefrom export",
    **_obj(
        {
            "format": {"type": "string", "enum": [FORMAT]},
            "version": {"type": "integer", "enum": [VERSION]},
            "exported_at": {"type": "string", "maxLength": 40, "description": "ISO-8601 UTC"},
            "filters": _obj(
                {
                    "site": {"type": ["string", "null"], "maxLength": 300},
                    "since": {"type": ["string", "null"], "maxLength": 10},
                    "include_off": {"type": "boolean"},
                },
                [],
                "what was asked for",
            ),
            "conversations": {"type": "array", "items": CONVERSATION},
            "facts": {"type": "array", "items": FACT},
            "documents": {"type": "array", "items": DOCUMENT},
        },
        ["format", "version", "conversations", "facts", "documents"],
        "Everything visible in a Wherefrom store (forgotten items never; off sites only when asked)",
    ),
}


def problem(data: Any) -> str | None:
    """The first field of `data` that breaks EXPORT, or None when it fits."""
    from server.api import validate
    from server.errors import ApiError

    try:
        validate(data, EXPORT, "$")
    except ApiError as err:
        return err.message
    return None


def document() -> str:
    import json

    return json.dumps(EXPORT, indent=2, ensure_ascii=False) + "\n"
