"""Read a chat service's data export into the import wire form (pure: no store, no network).

Three shapes are recognised by their content, never by the file name:
  ChatGPT  a JSON array of {id, title, create_time, current_node, mapping}; `mapping` is a tree:
           the conversation shown is the path from `current_node` up through `parent` to the
           root; a sibling branch (a regenerated reply, an edited message) is kept as other
           versions of the turns at its places; times are Unix seconds;
           page https://chatgpt.com/c/<id>
  Claude   a JSON array of {uuid, name, created_at, chat_messages: [{uuid, sender, text,
           content, created_at}]}; ISO-8601 times (a date alone is day-granular); page
           https://claude.ai/chat/<uuid>
  Wherefrom  our own JSON export ({"format": "wherefrom-export", ...}, docs/export.schema.json)
A `.zip` (the services' download) is read for its conversations.json / wherefrom.json, inflated
as a stream and refused past MAX_BYTES (as a plain file is): a small zip cannot inflate to
gigabytes in memory.

What is kept: user and assistant messages, each with the service's message id as its native
id, its own time as valid_at, its place (`position`) and whether it is on the branch shown.
ChatGPT `code` becomes a fenced block. An untitled chat takes its first question as title.
Everything else is counted in `skipped` by reason (system and tool messages by content type,
the model's tool calls — an assistant message to a recipient other than `all`, e.g.
`open_url(...)` to the browser —, images, attachments, empty messages, messages without any
date) — never dropped silently, so kept + skipped is every message of the file. The whole file
is checked before anything is returned, every item through the import route's own checks
(server.dataio.checks: the shape, times from 1970 to 9999, URLs, empty text; NaN and Infinity
are not JSON): a malformed one raises ExportFormatError naming the field (and the line, for
JSON syntax), and nothing else ever leaves read_file (an encrypted or broken zip, nesting too
deep for the parser).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import json
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from server import ages, limits
from server.api import MAX_DEPTH, json_depth, strict_json
from server.dataio import checks, schema
from server.textcaps import cap

CHATGPT_PAGE = "https://chatgpt.com/c/{}"
CLAUDE_PAGE = "https://claude.ai/chat/{}"
ZIP_MEMBERS = ("conversations.json", "wherefrom.json")


class ExportFormatError(ValueError):
    """The file is not a readable export; the message names the line or field that broke."""


@dataclasses.dataclass
class Parsed:
    source: str  # chatgpt | claude | wherefrom
    conversations: list[dict[str, Any]]
    facts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    documents: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    skipped: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    truncated: int = 0

    @property
    def messages(self) -> int:
        """Every message kept: the turns shown and their other versions."""
        return sum(len(c["turns"]) for c in self.conversations)

    @property
    def other_versions(self) -> int:
        """Kept messages that are not on the branch shown (other versions of a turn)."""
        return sum(1 for c in self.conversations for t in c["turns"] if not t.get("shown", True))


MAX_BYTES = 1024 * 1024 * 1024  # one export file (or the zip member read from it), as JSON text


def read_file(path: Path) -> Parsed:
    """Read and check a whole export file (JSON or the service's .zip)."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
            if head == b"PK\x03\x04":
                raw, name = _from_zip(path)
            else:
                raw, name = head + _read_capped(f, MAX_BYTES - len(head), path.name), path.name
    except OSError as err:
        raise ExportFormatError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ExportFormatError(f"{name}: not UTF-8 (byte {err.start})") from None
    del raw
    try:
        data = strict_json(text)
    except json.JSONDecodeError as err:
        raise ExportFormatError(f"{name}: line {err.lineno}, column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise ExportFormatError(f"{name}: nested too deeply to be an export") from None
    except ValueError as err:  # NaN, Infinity
        raise ExportFormatError(f"{name}: {err}") from None
    if json_depth(data) > MAX_DEPTH:
        raise ExportFormatError(f"{name}: nested deeper than {MAX_DEPTH} levels; not an export")
    try:
        parsed = parse(data)
    except RecursionError:
        raise ExportFormatError(f"{name}: nested too deeply to be an export") from None
    found = checks.file_problem(parsed.conversations, parsed.facts, parsed.documents)
    if found is not None:
        raise ExportFormatError(found)
    return parsed


def _read_capped(f: IO[bytes], limit: int, name: str) -> bytes:
    """At most `limit` bytes of `f`, read as a stream; ExportFormatError past it."""
    parts: list[bytes] = []
    total = 0
    while chunk := f.read(1024 * 1024):
        total += len(chunk)
        if total > limit:
            raise ExportFormatError(f"{name}: larger than {MAX_BYTES // (1024 * 1024)} MB; not imported")
        parts.append(chunk)
    return b"".join(parts)


def _from_zip(path: Path) -> tuple[bytes, str]:
    try:
        with zipfile.ZipFile(path) as zf:
            names = {Path(n).name: n for n in zf.namelist()}
            for member in ZIP_MEMBERS:
                if member in names:
                    label = f"{path.name}:{names[member]}"
                    with zf.open(names[member]) as f:
                        return _read_capped(f, MAX_BYTES, label), label
    except zipfile.BadZipFile as err:
        raise ExportFormatError(f"{path}: not a readable zip ({err})") from None
    except RuntimeError as err:  # zipfile: "File ... is encrypted, password required for extraction"
        raise ExportFormatError(f"{path}: the zip is encrypted ({err}); export it again without a password") from None
    except (NotImplementedError, zlib.error, EOFError, ValueError) as err:
        raise ExportFormatError(f"{path}: cannot inflate the zip ({err})") from None
    raise ExportFormatError(f"{path}: the zip holds no conversations.json")


def parse(data: Any) -> Parsed:
    if isinstance(data, dict) and data.get("format") == schema.FORMAT:
        return parse_wherefrom(data)
    if not isinstance(data, list):
        raise ExportFormatError("top level: expected a JSON array of conversations (or a Wherefrom export)")
    first = next((c for c in data if isinstance(c, dict)), None)
    if first is None:
        if data:
            raise ExportFormatError("[0]: expected a conversation object")
        return Parsed("chatgpt", [])
    if "mapping" in first:
        return parse_chatgpt(data)
    if "chat_messages" in first:
        return parse_claude(data)
    raise ExportFormatError("[0]: neither a ChatGPT conversation (mapping) nor a Claude one (chat_messages)")


# -- shared checks ------------------------------------------------------------------------------


def _need(obj: Any, key: str, kinds: tuple[type, ...], where: str, *, optional: bool = False) -> Any:
    if not isinstance(obj, dict):
        raise ExportFormatError(f"{where}: expected an object")
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise ExportFormatError(f"{where}.{key}: missing")
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("number" if k in (int, float) else k.__name__ for k in kinds)
        raise ExportFormatError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def _time(value: float | None, where: str) -> float | None:
    """A Unix time from the file, refused unless finite and from 1970 to 9999 (server.ages)."""
    if value is None:
        return None
    if not ages.in_range(value):
        raise ExportFormatError(f"{where}: {value!r} is not a time from 1970 to 9999")
    return float(value)


def _text(value: str, parsed: Parsed) -> str:
    if len(value) > limits.TURN_CHARS:
        parsed.truncated += 1
        return cap(value, limits.TURN_CHARS)
    return value


def _turn(role: str, text: str, native_id: str, valid_at: float, granularity: str) -> dict[str, Any]:
    """A message as a turn; the services' exports hold a message as its Markdown source, so that
    is its Markdown too (the text is what search indexes)."""
    return {
        "role": role,
        "text": text,
        "markdown": text,
        "native_id": native_id,
        "valid_at": valid_at,
        "granularity": granularity,
    }


# -- ChatGPT ------------------------------------------------------------------------------------


def parse_chatgpt(data: list[Any]) -> Parsed:
    parsed = Parsed("chatgpt", [])
    for n, conv in enumerate(data):
        where = f"[{n}]"
        cid = _need(conv, "id", (str,), where)
        mapping = _need(conv, "mapping", (dict,), where)
        title = _need(conv, "title", (str,), where, optional=True) or ""
        created = _time(_need(conv, "create_time", (int, float), where, optional=True), f"{where}.create_time")
        shown = _current_branch(mapping, _need(conv, "current_node", (str,), where, optional=True), where)
        turns = _chatgpt_tree(mapping, shown, where, created, parsed)
        parsed.conversations.append(
            {
                "url": CHATGPT_PAGE.format(cid),
                "site": "chatgpt",
                "title": untitled_title(title, turns),
                "created_at": created,
                "native_id": cid,
                "turns": turns,
            }
        )
    return parsed


def _current_branch(mapping: dict[str, Any], node_id: str | None, where: str) -> set[str]:
    """The node ids from `current_node` up through `parent` to the root: the branch shown."""
    seen: set[str] = set()
    while node_id is not None:
        nwhere = f"{where}.mapping[{node_id!r}]"
        if node_id in seen:
            raise ExportFormatError(f"{nwhere}: the parent chain loops")
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise ExportFormatError(f"{nwhere}: missing (named by current_node or a parent)")
        node_id = _need(node, "parent", (str,), nwhere, optional=True)
    return seen


def _chatgpt_tree(
    mapping: dict[str, Any], shown: set[str], where: str, created: float | None, parsed: Parsed
) -> list[dict[str, Any]]:
    """Every message of the tree as a turn at its place: a turn's position is the number of kept
    turns above it, so a regenerated reply or an edited message (a sibling branch) is another
    version at the same position; `shown` marks the current branch. Shown turns come first, in
    order, then the other versions by position."""
    children: dict[str | None, list[str]] = collections.defaultdict(list)
    for node_id, node in mapping.items():
        parent = node.get("parent") if isinstance(node, dict) else None
        children[parent if isinstance(parent, str) and parent in mapping else None].append(node_id)
    turns: list[dict[str, Any]] = []
    reached = 0
    stack: list[tuple[str, int]] = [(r, 0) for r in reversed(children[None])]
    while stack:
        node_id, depth = stack.pop()
        reached += 1
        node = _need(mapping, node_id, (dict,), f"{where}.mapping")
        msg = node.get("message")
        if msg is not None:
            turn = _chatgpt_message(msg, f"{where}.mapping[{node_id!r}].message", created, parsed)
            if turn is not None:
                turn["position"] = depth
                turn["shown"] = node_id in shown
                turns.append(turn)
                depth += 1
        stack.extend((c, depth) for c in reversed(children[node_id]))
    if reached < len(mapping):
        unreachable = set(mapping) - _reachable(children)
        parsed.skipped["message outside the conversation's tree"] += sum(
            1 for k in unreachable if isinstance(mapping[k], dict) and mapping[k].get("message")
        )
    turns.sort(key=lambda t: (not t["shown"], t["position"], t["valid_at"]))
    return turns


def _reachable(children: dict[str | None, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(children[None])
    while stack:
        k = stack.pop()
        if k not in seen:
            seen.add(k)
            stack.extend(children.get(k, []))
    return seen


TITLE_FROM_QUESTION_CHARS = 80
UNTITLED = ("", "new chat", "untitled")


def untitled_title(title: str, turns: list[dict[str, Any]]) -> str:
    """An untitled chat (no title, or the service's placeholder) is titled by its first question,
    on one line, cut by the one cap rule; a chat without a question keeps what it had."""
    if title.strip().lower() not in UNTITLED:
        return title
    question = next((t["text"] for t in turns if t["role"] == "user" and t.get("shown", True)), "")
    line = " ".join(question.split())
    return cap(line, TITLE_FROM_QUESTION_CHARS, ellipsis=True) if line else title


def _chatgpt_message(msg: Any, where: str, conv_time: float | None, parsed: Parsed) -> dict[str, Any] | None:
    mid = _need(msg, "id", (str,), where)
    author = _need(msg, "author", (dict,), where)
    role = _need(author, "role", (str,), f"{where}.author")
    content = _need(msg, "content", (dict,), where)
    ctype = _need(content, "content_type", (str,), f"{where}.content")
    when = _time(_need(msg, "create_time", (int, float), where, optional=True), f"{where}.create_time")
    if role not in ("user", "assistant"):
        parsed.skipped[f"{role} message ({ctype})"] += 1
        return None
    recipient = msg.get("recipient")
    if role == "assistant" and isinstance(recipient, str) and recipient != "all":
        # the model calling a tool (open_url(...), a plugin): not prose the person read
        parsed.skipped[f"tool call ({recipient})"] += 1
        return None
    if ctype in ("text", "multimodal_text"):
        parts = _need(content, "parts", (list,), f"{where}.content")
        texts = []
        for k, part in enumerate(parts):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                parsed.skipped[f"{part.get('content_type', 'non-text')} part"] += 1
            else:
                raise ExportFormatError(f"{where}.content.parts[{k}]: expected text or an object")
        text = "\n\n".join(t for t in texts if t.strip())
    elif ctype == "code":
        code = _need(content, "text", (str,), f"{where}.content")
        lang = _need(content, "language", (str,), f"{where}.content", optional=True) or ""
        lang = "" if lang == "unknown" else lang
        text = f"```{lang}\n{code.replace(chr(13) + chr(10), chr(10))}\n```" if code.strip() else ""
    else:
        parsed.skipped[f"{role} {ctype}"] += 1
        return None
    if not text.strip():
        parsed.skipped["empty message"] += 1
        return None
    valid_at = when if when is not None else conv_time
    if valid_at is None:
        parsed.skipped["message without a date"] += 1
        return None
    return _turn(role, _text(text, parsed), mid, float(valid_at), ages.INSTANT)


# -- Claude -------------------------------------------------------------------------------------


def _claude_time(value: Any, where: str) -> tuple[float, str]:
    """ISO-8601 instant (Z or offset; naive means UTC) -> instant; a date alone -> day."""
    if not isinstance(value, str):
        raise ExportFormatError(f"{where}: expected an ISO-8601 time, got {type(value).__name__}")
    try:
        if len(value) == 10:
            from server.memory.facts import day_valid_at

            return day_valid_at(dt.date.fromisoformat(value).isoformat()), ages.DAY
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, Exception) as err:  # day_valid_at raises BadRequest for out-of-range days
        raise ExportFormatError(f"{where}: not an ISO-8601 time ({value!r})") from err
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.UTC)
    when = t.timestamp()
    if not ages.in_range(when):
        raise ExportFormatError(f"{where}: {value!r} is not a time from 1970 to 9999")
    return when, ages.INSTANT


def parse_claude(data: list[Any]) -> Parsed:
    parsed = Parsed("claude", [])
    for n, conv in enumerate(data):
        where = f"[{n}]"
        cid = _need(conv, "uuid", (str,), where)
        title = _need(conv, "name", (str,), where, optional=True) or ""
        created = None
        if conv.get("created_at") is not None:
            created = _claude_time(conv["created_at"], f"{where}.created_at")[0]
        messages = _need(conv, "chat_messages", (list,), where)
        turns: list[dict[str, Any]] = []
        for k, msg in enumerate(messages):
            mwhere = f"{where}.chat_messages[{k}]"
            mid = _need(msg, "uuid", (str,), mwhere)
            sender = _need(msg, "sender", (str,), mwhere)
            text = _need(msg, "text", (str,), mwhere, optional=True) or ""
            blocks = _need(msg, "content", (list,), mwhere, optional=True) or []
            block_texts = []
            for b, block in enumerate(blocks):
                btype = _need(block, "type", (str,), f"{mwhere}.content[{b}]")
                if btype == "text":
                    block_texts.append(_need(block, "text", (str,), f"{mwhere}.content[{b}]"))
                else:
                    parsed.skipped[f"{btype} block"] += 1
            if not text.strip():
                text = "\n\n".join(t for t in block_texts if t.strip())
            for key in ("attachments", "files"):
                items = _need(msg, key, (list,), mwhere, optional=True) or []
                if items:
                    parsed.skipped[key.rstrip("s")] += len(items)
            when = msg.get("created_at")
            valid_at, gran = _claude_time(when, f"{mwhere}.created_at") if when is not None else (created, ages.INSTANT)
            role = {"human": "user", "assistant": "assistant"}.get(sender)
            if role is None:
                parsed.skipped[f"{sender} message"] += 1
                continue
            if not text.strip():
                parsed.skipped["empty message"] += 1
                continue
            if valid_at is None:
                parsed.skipped["message without a date"] += 1
                continue
            turn = _turn(role, _text(text, parsed), mid, valid_at, gran)
            turns.append({**turn, "position": len(turns), "shown": True})
        parsed.conversations.append(
            {
                "url": CLAUDE_PAGE.format(cid),
                "site": "claude",
                "title": untitled_title(title, turns),
                "created_at": created,
                "native_id": cid,
                "turns": turns,
            }
        )
    return parsed


# -- our own export -----------------------------------------------------------------------------


def parse_wherefrom(data: dict[str, Any]) -> Parsed:
    found = schema.problem(data)
    if found is not None:
        raise ExportFormatError(found)
    return Parsed("wherefrom", list(data["conversations"]), list(data["facts"]), list(data["documents"]))
