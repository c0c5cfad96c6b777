"""Dutch questions about Dutch conversations, asked in Dutch: on a store of bench_search_quality.py,
through our server's HTTP API as the panel asks (GET /api/search, limit 20), the 20 paraphrases of
bench/search_queries_dutch.json (the target's meaning in other Dutch words; most of the reference
ChatGPT export is Dutch, and its owner asks in Dutch). Per lane (`words`, `meaning`, fused):
recall@1/5/10, MRR, how many answers call a result close and how many could not judge (`judged`
false: server.memory.ranking UNJUDGED); and for each query which models read
it (`deep.reads`: the second model; `third.reads`: the third voice, for the items the second does
not read) and its rank per lane.

    .venv/bin/python bench/bench_search_quality.py --data-dir D --repeat 0   # the store, once
    .venv/bin/python bench/bench_dutch.py D

The queries are checked first as bench_search_quality.py checks its paraphrases, with Dutch
function words left out as its English stop words are (NL_STOP): no query term may match an item
stored at the target URL. A failed check exits 1 before anything is asked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_search_quality import (  # noqa: E402
    REFERENCE,
    ask,
    load_queries,
    paraphrase_violations,
    rank_of,
    wait_for_vectors,
)
from server.meaning import deep, third  # noqa: E402
from testkit.server_process import ServerProcess  # noqa: E402

DUTCH = Path(__file__).with_name("search_queries_dutch.json")
LANES = ("words", "meaning", "both")
NL_STOP = frozenset(
    "de het een van in op aan bij met voor naar om te die dat er niet is zijn hoe wat ik je jij mijn me en "
    "als over tot door of ook nog dan maar moet kan wil zal af uit".split()
)


def violations(db: Path) -> list[str]:
    """The paraphrase check's findings that are not Dutch function words."""
    return [v for v in paraphrase_violations(db, DUTCH) if v.split(": '")[-1].split("'")[0] not in NL_STOP]


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path, help="a store of bench_search_quality.py (--data-dir)")
    args = ap.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    if bad := violations(args.data_dir / "wherefrom.db"):
        print("paraphrase check failed:\n  " + "\n  ".join(bad))
        return 1
    queries = load_queries(DUTCH)
    server = ServerProcess(args.data_dir).start()
    ranks: dict[str, list[int]] = {lane: [] for lane in LANES}
    close: dict[str, int] = dict.fromkeys(LANES, 0)
    unjudged: dict[str, int] = dict.fromkeys(LANES, 0)
    try:
        await wait_for_vectors(server)
        async with aiohttp.ClientSession() as session:
            for q in queries:
                for lane in LANES:
                    body = await ask(session, server, q["q"], lane)
                    ranks[lane].append(rank_of(body, q["target"]) or 999)
                    close[lane] += bool(body["close"])
                    unjudged[lane] += body.get("judged") is False
    finally:
        server.stop()
    n = len(queries)
    print(f"{n} Dutch paraphrases\nlane      r@1   r@5  r@10   MRR  close  not judged")
    for lane in LANES:
        r = ranks[lane]
        share = [sum(x <= k for x in r) / n for k in (1, 5, 10)]
        mrr = sum(1 / x for x in r) / n
        print(
            f"{lane:<8} {share[0]:.2f}  {share[1]:.2f}  {share[2]:.2f}  {mrr:.2f}  {close[lane] / n:.2f}"
            f"  {unjudged[lane] / n:.2f}"
        )
    print("query  (second model reads it / third voice reads it): rank words, meaning, fused")
    for k, q in enumerate(queries):
        reads = f"{'y' if deep.reads(q['q']) else 'n'}/{'y' if third.reads(q['q']) else 'n'}"
        shown = ", ".join(str(ranks[lane][k]) if ranks[lane][k] < 999 else "-" for lane in LANES)
        print(f"  {reads}  {shown:<14} {q['q']}")
    print(json.dumps({lane: [sum(x <= k for x in ranks[lane]) for k in (1, 5, 10)] for lane in LANES}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
