"""Extraction quality and speed: the library pipeline's extraction beside bare trafilatura.

    .venv/bin/python bench/bench_extraction.py [--corpus DIR] [--repeat N]

Reads ../shared/reference/extraction/ (evaldata.json: url -> {file, with: [...], without: [...]})
and scores, as trafilatura's evaluation defines it, over snippets found as substrings of the
whitespace-normalised extracted text: a `with` snippet found is a true positive, missed a false
negative; a `without` snippet found is a false positive, absent a true negative.
P = tp/(tp+fp), R = tp/(tp+fn), F1 their harmonic mean.

"pipeline" is what add_url/add_text run on a page: server.library.extract.extract_html
(trafilatura with metadata, the page's Markdown from the same pass, the BeautifulSoup fallback,
the head's canonical URL and language) followed by chunking (server.library.chunking.chunk_text).
"no markdown" is the same pipeline without the Markdown (extract_html(markdown=False)): the
same-run baseline of the Markdown's cost (target: at most 20 % more time), and its text must be
identical to the pipeline's on every page (search text unchanged). "bare" is
trafilatura.extract(html) with its defaults. All see the same decoded HTML in the same run. Exits 0 with a message when
the corpus is absent.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = ROOT.parent / "shared" / "reference" / "extraction"


def score(text: str | None, item: dict) -> tuple[int, int, int, int]:
    """(tp, fn, fp, tn) of one page."""
    if not text:
        return 0, len(item["with"]), 0, len(item["without"])
    flat = re.sub(r"\s+", " ", text)
    tp = sum(1 for s in item["with"] if s in flat)
    fp = sum(1 for s in item["without"] if s in flat)
    return tp, len(item["with"]) - tp, fp, len(item["without"]) - fp


def prf(tp: int, fn: int, fp: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def load(corpus: Path) -> list[tuple[str, str, dict]]:
    from trafilatura.utils import decode_file

    data = json.loads((corpus / "evaldata.json").read_text("utf-8"))
    pages = []
    for url, item in data.items():
        path = corpus / "html" / item["file"]
        if path.exists():
            pages.append((url, decode_file(path.read_bytes()), item))
    return pages


def run(extractors: dict[str, Callable[[str, str], str | None]], pages: list, repeat: int) -> list[dict]:
    """Time every extractor on every page, interleaved page by page (fair to a busy machine);
    a page's time is its best over `repeat` passes."""
    best: dict[str, list[float]] = {name: [float("inf")] * len(pages) for name in extractors}
    texts: dict[str, list[str | None]] = {name: [None] * len(pages) for name in extractors}
    for _ in range(repeat):
        for i, (url, html, _item) in enumerate(pages):
            for name, fn in extractors.items():
                start = time.perf_counter()
                texts[name][i] = fn(html, url)
                best[name][i] = min(best[name][i], time.perf_counter() - start)
    results = []
    for name in extractors:
        totals = [0, 0, 0, 0]
        for text, (_url, _html, item) in zip(texts[name], pages, strict=True):
            for k, v in enumerate(score(text, item)):
                totals[k] += v
        tp, fn_, fp, tn = totals
        p, r, f = prf(tp, fn_, fp)
        seconds = sum(best[name])
        results.append(
            {
                "name": name,
                "p": p,
                "r": r,
                "f1": f,
                "seconds": seconds,
                "pps": len(pages) / seconds,
                "tp": tp,
                "fn": fn_,
                "fp": fp,
                "tn": tn,
                "empty": sum(1 for t in texts[name] if not t),
                "texts": texts[name],
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--repeat", type=int, default=2, help="timed passes; each page keeps its best time")
    args = ap.parse_args(argv)
    if not (args.corpus / "evaldata.json").exists():
        print(f"bench_extraction: no corpus at {args.corpus}; skipped")
        return 0

    import logging

    import trafilatura

    from server.library.chunking import chunk_text
    from server.library.extract import extract_html

    logging.disable(logging.CRITICAL)  # trafilatura logs every page it finds short

    def bare(html: str, url: str) -> str | None:
        return trafilatura.extract(html)

    markdown_of: dict[str, str | None] = {}

    def pipeline(html: str, url: str) -> str | None:
        extracted = extract_html(html, url)
        chunk_text(extracted.text)
        markdown_of[url] = extracted.markdown
        return extracted.text

    def no_markdown(html: str, url: str) -> str | None:
        extracted = extract_html(html, url, markdown=False)
        chunk_text(extracted.text)
        return extracted.text

    pages = load(args.corpus)
    print(f"{len(pages)} pages from {args.corpus}, best of {args.repeat} pass(es)")
    # warm both up (imports, lazy tables) outside the timing
    for url, html, _ in pages[:3]:
        bare(html, url)
        pipeline(html, url)
        no_markdown(html, url)
    results = run(
        {
            "bare trafilatura.extract": bare,
            "pipeline extract_html+chunks": pipeline,
            "pipeline, no markdown": no_markdown,
        },
        pages,
        args.repeat,
    )
    print(f"{'':30} {'precision':>9} {'recall':>7} {'F1':>6} {'pages/s':>8}  tp/fn/fp/tn  empty")
    for r in results:
        print(
            f"{r['name']:30} {r['p']:9.3f} {r['r']:7.3f} {r['f1']:6.3f} {r['pps']:8.1f}  "
            f"{r['tp']}/{r['fn']}/{r['fp']}/{r['tn']}  {r['empty']}"
        )
    bare_r, pipe_r, plain_r = results
    overhead = pipe_r["seconds"] / bare_r["seconds"]
    print(f"overhead: pipeline takes {overhead:.2f}x the time of bare trafilatura ({(overhead - 1) * 100:+.1f} %)")
    md_cost = pipe_r["seconds"] / plain_r["seconds"]
    with_md = sum(1 for v in markdown_of.values() if v)
    print(
        f"markdown: the pipeline takes {md_cost:.3f}x the time of the same pipeline without Markdown "
        f"({(md_cost - 1) * 100:+.1f} %); {with_md} of {len(pages)} pages have Markdown"
    )
    texts_same = pipe_r["texts"] == plain_r["texts"]
    print(f"search text {'identical' if texts_same else 'DIFFERS'} with and without Markdown")
    ok_quality = pipe_r["f1"] >= bare_r["f1"]
    ok_speed = overhead <= 1.20
    ok_md = md_cost <= 1.20 and texts_same
    print(
        f"quality {'OK' if ok_quality else 'BELOW bare'}; overhead {'OK' if ok_speed else 'ABOVE 20 %'}; "
        f"markdown {'OK' if ok_md else 'ABOVE 20 % or text changed'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
