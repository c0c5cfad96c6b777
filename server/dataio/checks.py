"""What the import route checks beyond the JSON shape, in one place: the route runs it on every
batch and `wherefrom import-chats` on the whole file before anything is sent, so a file that
would fail half-way (an empty message, a URL that cannot be stored) is refused whole.

`content_checks` raises the route's ApiError; `file_problem` runs the shape (server.dataio.schema,
the route's own validator) and these checks over every item of a parsed file and names the first
field that breaks, or None.
"""

from __future__ import annotations

from typing import Any

from server.api import validate
from server.dataio import schema
from server.errors import ApiError, BadRequest
from server.provenance import stamp


def _url(value: str, field: str) -> None:
    try:
        stamp(value, None)
    except ApiError as err:
        raise BadRequest(f"{field}: {err.message}", code="bad_url", field=field) from None


def content_checks(
    conversations: list[dict[str, Any]], facts: list[dict[str, Any]], documents: list[dict[str, Any]], where: str
) -> None:
    for n, conv in enumerate(conversations):
        _url(conv["url"], f"{where}.conversations[{n}].url")
        for k, turn in enumerate(conv["turns"]):
            if not turn["text"].strip():
                raise BadRequest(
                    "a message is empty", code="bad_value", field=f"{where}.conversations[{n}].turns[{k}].text"
                )
    for n, fact in enumerate(facts):
        _url(fact["url"], f"{where}.facts[{n}].url")
        if not fact["text"].strip():
            raise BadRequest("a note is empty", code="bad_value", field=f"{where}.facts[{n}].text")
    for n, doc in enumerate(documents):
        _url(doc["url"], f"{where}.documents[{n}].url")
        if not doc["text"].strip():
            raise BadRequest("a document is empty", code="bad_value", field=f"{where}.documents[{n}].text")


def file_problem(conversations: list[Any], facts: list[Any], documents: list[Any]) -> str | None:
    """The first item of a parsed file the import route would refuse, named; None when all pass."""
    try:
        for name, items, shape in (
            ("conversations", conversations, schema.CONVERSATION),
            ("facts", facts, schema.FACT),
            ("documents", documents, schema.DOCUMENT),
        ):
            for n, item in enumerate(items):
                validate(item, shape, f"{name}[{n}]")
        content_checks(conversations, facts, documents, "")
    except ApiError as err:
        return err.message.lstrip(".")
    return None
