"""Spelling correction for search: a query word that no item holds is replaced by the words of
the index that are one edit away from it (insert, delete, substitute, transpose two neighbours).

The index holds porter stems (searchtext.TOKENIZE), so the candidates are every one-edit
spelling of the typed word, each stemmed by SQLite's own tokenizer (an in-memory FTS5 table of
the same tokenizer, read back through fts5vocab), and the stems are looked up in the vocabulary
of both full-text indexes (fts5vocab tables `facts_fts_vocab`, `document_chunks_fts_vocab`).
Since an edit is undone by one edit, the word the person meant is always among the candidates.
A word of the language (a whole word of the embedding model's vocabulary: model.whole_word) is
not corrected: a real word no item holds is not taken for a misspelling of another.
The vocabulary counts hidden items too; what a correction finds is still read through the
visibility rule, so a word only a forgotten item holds corrects to nothing shown.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import string
import threading

from server.meaning.model import whole_word
from server.searchtext import STOP_WORDS, TOKENIZE
from server.store.db import Store

MIN_WORD_CHARS = 4  # shorter words have too many neighbours to mean one of them
MAX_WORDS = 3  # words corrected in one query (each ~1 ms once the indexes are merged: server.store.fts_merge)
# words looked up in one query, corrected or not: a pasted text of names and identifiers no item
# holds would otherwise have each of its 32 terms' ~500 spellings read (~200 ms)
MAX_TRIED = 6
MAX_CORRECTIONS = 4  # spellings kept for one word: the ones most items hold
_ALPHABET = string.ascii_lowercase
_VOCABS = ("facts_fts_vocab", "document_chunks_fts_vocab")


def correctable(word: str) -> bool:
    """A word worth correcting: letters only (a Latin-script word, not a number or code), long enough."""
    return len(word) >= MIN_WORD_CHARS and word.isalpha() and word.isascii()


def edits(word: str) -> list[str]:
    """Every spelling one edit (Damerau-Levenshtein) away from the word, the word itself excluded."""
    letters = sorted(set(_ALPHABET) | set(word))
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out: dict[str, None] = {}
    for a, b in splits:
        if b:
            out[a + b[1:]] = None  # delete
        if len(b) > 1:
            out[a + b[1] + b[0] + b[2:]] = None  # transpose
        for c in letters:
            if b:
                out[a + c + b[1:]] = None  # substitute
            out[a + c + b] = None  # insert
    out.pop(word, None)
    return [w for w in out if w]


class _Stemmer:
    """The index's own tokenizer, on a private in-memory database: word -> indexed term."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._con = sqlite3.connect(":memory:", check_same_thread=False)
        self._con.execute(f"CREATE VIRTUAL TABLE s USING fts5(w, tokenize='{TOKENIZE}')")
        self._con.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, 'instance')")

    def stems(self, words: list[str]) -> dict[str, str]:
        """{stem: the first of `words` with that stem} (each word is one token: letters only)."""
        with self._lock, self._con:
            self._con.execute("INSERT INTO s(rowid, w) VALUES (1, ?)", (" ".join(words),))
            rows = self._con.execute('SELECT term, "offset" FROM sv ORDER BY "offset"').fetchall()
            self._con.execute("DELETE FROM s")
        out: dict[str, str] = {}
        for term, offset in rows:
            if 0 <= offset < len(words):
                out.setdefault(str(term), words[int(offset)])
        return out


_STEMMER = _Stemmer()
_LOOKUP = "SELECT term, doc FROM {vocab} WHERE term IN (SELECT value FROM json_each(?))"


def _stop_stems() -> frozenset[str]:
    return frozenset(_STEMMER.stems(sorted(STOP_WORDS)))


_STOP_STEMS = _stop_stems()


def _candidates(word: str) -> dict[str, str] | None:
    """{indexed form: spelling} of the word's one-edit spellings; None for a word of the language
    (model.whole_word): "week" that no item holds was not a misspelled "weed", and in a sentence
    such words are most of what is missing (each correction reads ~500 spellings in both indexes)."""
    return None if whole_word(word) else _STEMMER.stems(edits(word))


async def corrections(store: Store, word: str, max_facts: int) -> list[str] | None:
    """Spellings one edit from `word` that the index holds, the most widely held first, at most
    MAX_CORRECTIONS; each is a word whose indexed form is in the index (a MATCH of it finds items).
    Stop words, and words more than `max_facts` facts hold, are never a correction (a typo of a
    rare word is not a common one, and reading a common word's list costs time by the store).
    None when the word is not looked up at all (not `correctable`, or a word of the language):
    what costs nothing does not count against MAX_TRIED."""
    if not correctable(word):
        return None
    found = await asyncio.to_thread(_candidates, word)
    if found is None:
        return None
    by_stem = {stem: w for stem, w in found.items() if stem not in _STOP_STEMS}
    if not by_stem:
        return []
    stems = json.dumps(list(by_stem))
    docs: dict[str, int] = {}
    for vocab in _VOCABS:
        for term, doc in await store.fetchall(_LOOKUP.format(vocab=vocab), (stems,)):
            if vocab == _VOCABS[0] and int(doc) > max_facts:
                docs[term] = -1  # common: never
            elif docs.get(term, 0) >= 0:
                docs[term] = docs.get(term, 0) + int(doc)
    usable = [t for t in docs if docs[t] > 0 and t in by_stem]
    best = sorted(usable, key=lambda t: (-docs[t], t))[:MAX_CORRECTIONS]
    return [by_stem[t] for t in best]
