"""The one owner of how text meets FTS5: the indexed form and the query builder.

Both the memory items and the library chunks index `index_form(text)`; every search builds
its MATCH strings from `terms(user_text)` and `term_match(term)` (or `fts_queries`). User text
never reaches MATCH unquoted, so an operator (AND, OR, NOT, NEAR), a quote, a parenthesis, `*`,
`^` or `col:` is only a word. Tables use the tokenizer `porter unicode61 remove_diacritics 2`
(see TOKENIZE).

Scripts written without spaces (Han, kana, Hangul, Thai) are one unicode61 token per run, so a
word inside a sentence could not be found. `index_form` writes each such run as its overlapping
character pairs plus its last character ("東京で" -> "東京 京で で"); a query word of that script
is the phrase of its own pairs, which occurs in the indexed form exactly when the word occurs
in the text (one character: the prefix of a pair). Thai vowel and tone marks are separators to
unicode61, so they are dropped from a run on both sides.
"""

from __future__ import annotations

import re

TOKENIZE = "porter unicode61 remove_diacritics 2"
MAX_TERMS = 32
_POSSESSIVE = re.compile(r"(\w)['’‘`]s\b", re.UNICODE)
_QUOTE = re.compile("['’‘`]")
# Thai combining marks (category Mn): unicode61 splits at them, Python's \w does not hold them
THAI_MARKS = "\u0e31\u0e34-\u0e3a\u0e47-\u0e4e"
UNSPACED_CHARS = (
    "\u0e01-\u0e30\u0e32\u0e33\u0e40-\u0e46"  # Thai letters and vowels that are letters
    + THAI_MARKS
    + "\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff"  # 々〆〇, hiragana, katakana
    + "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    + "\uac00-\ud7af\uff66-\uff9f"  # Hangul syllables, halfwidth katakana
    + "\U00020000-\U0002fa1f"  # Han, supplementary planes
)
_UNSPACED_RUN = re.compile(f"[{UNSPACED_CHARS}]+")
_THAI_MARK = re.compile(f"[{THAI_MARKS}]")
_TOKEN = re.compile(rf"(?:\w|[{THAI_MARKS}])+", re.UNICODE)

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours yourself yourselves""".split()
)


def _pairs(run: str) -> list[str]:
    """A run of an unspaced script as its overlapping character pairs (marks dropped)."""
    run = _THAI_MARK.sub("", run)
    return [run[i : i + 2] for i in range(len(run) - 1)] or ([run] if run else [])


def _indexed_run(match: re.Match[str]) -> str:
    run = _THAI_MARK.sub("", match.group())
    if len(run) < 2:
        return f" {run} "
    return " " + " ".join(map(str.__add__, run, run[1:])) + f" {run[-1]} "  # the pairs, then the last


def index_form(text: str) -> str:
    """The text as it is indexed: possessives folded ("dog's" -> "dogs"), runs of unspaced
    scripts as character pairs ("東京で" -> "東京 京で で")."""
    folded = _POSSESSIVE.sub(r"\1s", text) if _QUOTE.search(text) else text
    if folded.isascii() or not _UNSPACED_RUN.search(folded):
        return folded
    return _UNSPACED_RUN.sub(_indexed_run, folded)


def search_forms(title: str, text: str) -> dict[str, str | None]:
    """A fact's indexed forms, stored only where they differ from the text (see 0002_memory.sql)."""
    st, sx = index_form(title), index_form(text)
    return {"search_title": st if st != title else None, "search_text": sx if sx != text else None}


def is_unspaced(term: str) -> bool:
    """Does the term hold a character of a script written without spaces?"""
    return _UNSPACED_RUN.search(term) is not None


def terms(user_text: str) -> list[str]:
    """Word tokens of the user's text (possessives folded, lowercased), at most MAX_TERMS, no repeats."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(_POSSESSIVE.sub(r"\1s", user_text).lower()):
        tok = tok.strip("_")
        if tok and _THAI_MARK.sub("", tok) and tok not in seen:
            seen[tok] = None
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def term_match(term: str) -> str:
    """One term (from `terms`) as a MATCH expression: the quoted word; for a word of an unspaced
    script, the phrase of its character pairs as the text is indexed, open at both ends (a lone
    character at the end is a prefix)."""
    if not is_unspaced(term):
        return _quote(term)
    tokens: list[str] = []
    pieces = [p for p in re.split(f"([{UNSPACED_CHARS}]+)", term) if p]
    prefix = False
    for i, piece in enumerate(pieces):
        if not _UNSPACED_RUN.fullmatch(piece):
            tokens.append(piece)
            continue
        pairs = _pairs(piece)
        last = i == len(pieces) - 1
        tokens += pairs
        if len(_THAI_MARK.sub("", piece)) >= 2 and not last:
            tokens.append(_THAI_MARK.sub("", piece)[-1])  # followed by other letters: the run ends here
        prefix = last and len(pairs[0]) < 2 if pairs else False
    tokens = [t for t in tokens if t]
    if not tokens:
        return _quote(term)
    return _quote(" ".join(tokens)) + ("*" if prefix else "")


def match_all(match_terms: list[str]) -> str:
    """Every term (AND spelled out: FTS5 has no implicit AND beside a parenthesised group)."""
    return " AND ".join(match_terms)


def match_any(match_terms: list[str]) -> str:
    return " OR ".join(match_terms)


def fts_queries(user_text: str) -> list[str]:
    """MATCH strings to try in order: every term; then any non-stop-word term."""
    words = terms(user_text)
    if not words:
        return []
    queries = [match_all([term_match(w) for w in words])]
    content = [w for w in words if w not in STOP_WORDS] or words
    if len(content) > 1 or content != words:
        queries.append(match_any([term_match(w) for w in content]))
    return list(dict.fromkeys(queries))
