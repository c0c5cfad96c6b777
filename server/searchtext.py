"""The one owner of how text meets FTS5: the indexed form and the query builder.

Both the memory items and the library chunks index `index_form(text)`; every search builds
its MATCH strings with `fts_queries(user_text)`. User text never reaches MATCH unquoted, so an
operator (AND, OR, NOT, NEAR), a quote, a parenthesis, `*`, `^` or `col:` is only a word.
Tables use the tokenizer `porter unicode61 remove_diacritics 2` (see TOKENIZE).
"""

from __future__ import annotations

import re

TOKENIZE = "porter unicode61 remove_diacritics 2"
MAX_TERMS = 32
_POSSESSIVE = re.compile(r"(\w)['’‘`]s\b", re.UNICODE)
_TOKEN = re.compile(r"\w+", re.UNICODE)

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves""".split()
)


def index_form(text: str) -> str:
    """The text as it is indexed: possessives folded ("dog's" -> "dogs")."""
    return _POSSESSIVE.sub(r"\1s", text)


def terms(user_text: str) -> list[str]:
    """Word tokens of the user's text (possessives folded, lowercased), at most MAX_TERMS, no repeats."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(index_form(user_text).lower()):
        tok = tok.strip("_")
        if tok and tok not in seen:
            seen[tok] = None
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_queries(user_text: str) -> list[str]:
    """MATCH strings to try in order: every term; then any non-stop-word term."""
    words = terms(user_text)
    if not words:
        return []
    queries = [" ".join(_quote(w) for w in words)]
    content = [w for w in words if w not in STOP_WORDS] or words
    if len(content) > 1 or content != words:
        queries.append(" OR ".join(_quote(w) for w in content))
    return list(dict.fromkeys(queries))
