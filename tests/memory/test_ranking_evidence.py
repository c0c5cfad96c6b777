"""The fusion weighs each lane by the strength of its own evidence (server.memory.ranking.fuse):
a words hit by the share of all the asked words it holds, a meaning hit by its cosine. Inputs
are the lanes' ranked lists in the shape server.memory.ranking.search passes them."""

from __future__ import annotations

from typing import Any

from server.meaning.deep import judged
from server.memory.ranking import CLOSE, NOTE, UNJUDGED, fuse


def fact(n: int, **lane: Any) -> dict[str, Any]:
    return {"id": n, "kind": "note", "source_url": f"https://site.example/{n}", "text": f"item {n}", **lane}


def ids(answer: dict[str, Any]) -> list[int]:
    return [int(r["id"]) for r in answer["results"]]


def test_a_corrected_spelling_is_not_pushed_out_by_faint_meaning_neighbours() -> None:
    # "terrafrom": the one asked word, found by its corrected spelling (strength 0.75, coverage 1)
    lexical = [fact(1, words=0.75, coverage=1.0), fact(2, words=0.75, coverage=1.0)]
    meaning = [fact(100 + n, meaning=round(0.2 - n * 0.005, 3)) for n in range(20)]
    answer = fuse(lexical, meaning, 20)
    assert ids(answer)[:2] == [1, 2]
    assert answer["close"] and "coverage" not in answer["results"][0]  # the weight is not shown


def test_one_rare_word_of_three_does_not_outrank_a_close_meaning_match() -> None:
    # a turn holding "elk" only, of "elk indexing software" (the other two are common words)
    lexical = [fact(1, words=1.0, coverage=0.333)]
    meaning = [fact(2, meaning=CLOSE + 0.05), fact(3, meaning=0.2)]
    assert ids(fuse(lexical, meaning, 10))[0] == 2


def test_holding_every_asked_word_still_beats_a_middling_meaning_match() -> None:
    # positive control: strong words evidence wins over a cosine below CLOSE
    lexical = [fact(1, words=1.0, coverage=1.0)]
    meaning = [fact(2, meaning=CLOSE - 0.1)]
    assert ids(fuse(lexical, meaning, 10)) == [1, 2]


def test_a_hit_of_both_lanes_sums_their_evidence() -> None:
    lexical = [fact(1, words=0.75, coverage=0.75), fact(2, words=0.75, coverage=0.75)]
    meaning = [fact(3, meaning=0.3), fact(2, meaning=0.3)]
    answer = fuse(lexical, meaning, 10)
    assert ids(answer)[0] == 2 and answer["results"][0]["why"] == "both"


def test_a_partial_word_overlap_is_not_counted_twice_beside_its_cosine() -> None:
    # "deep nets on my geforce graphics card": a turn holding "deep" and "net" (0.4 of the words),
    # second by meaning, went over the first by meaning, which holds none of them
    lexical = [fact(1, words=0.4, coverage=0.4)]
    meaning = [fact(2, meaning=CLOSE + 0.01), fact(1, meaning=CLOSE - 0.01)]
    answer = fuse(lexical, meaning, 10)
    assert ids(answer) == [2, 1]
    assert answer["results"][1]["why"] == "both" and answer["results"][1]["words"] == 0.4  # still shown as both
    # control: holding two thirds of the words, the same item sums both lanes and comes first
    assert ids(fuse([fact(1, words=0.7, coverage=0.7)], meaning, 10)) == [1, 2]


def test_a_match_is_close_by_meaning_on_its_judges_cosine_not_its_score() -> None:
    # the meaning lane's score ranks; `judged` (the second model's cosine) says whether it is close
    high = [fact(1, meaning=CLOSE + 0.1, judged=CLOSE - 0.1)]
    assert fuse([], high, 10)["close"] is False and "judged" not in fuse([], high, 10)["results"][0]
    assert fuse([], [fact(1, meaning=CLOSE - 0.05, judged=CLOSE + 0.1)], 10)["close"] is True
    # the static model alone (no judge) ranks it, never calls it close
    assert fuse([], [fact(1, meaning=0.9)], 10)["close"] is False
    # control: by words it is close whatever the meaning lane says
    both = fuse([fact(1, words=1.0, coverage=1.0)], [fact(1, meaning=0.1, judged=0.1)], 10)
    assert both["close"] is True and both["results"][0]["why"] == "both"


def test_no_close_match_is_said_only_where_something_judged() -> None:
    # the nearest by meaning, none of them read by a judge (the static model alone): not judged
    unread = fuse([fact(1, words=0.3, coverage=0.3)], [fact(2, meaning=0.9), fact(3, meaning=0.5)], 10)
    assert (unread["close"], unread["judged"], unread["note"]) == (False, False, UNJUDGED)
    # one of them judged (not close): nothing is close, and that is said
    one = fuse([], [fact(2, meaning=0.9), fact(3, meaning=0.5, judged=0.2)], 10)
    assert (one["close"], one["judged"], one["note"]) == (False, True, NOTE)
    # only word overlaps, judged by their share of the words
    overlaps = fuse([fact(1, words=0.3, coverage=0.3)], [], 10)
    assert (overlaps["close"], overlaps["judged"], overlaps["note"]) == (False, True, NOTE)
    # control: a close result, no note
    close = fuse([fact(1, words=1.0, coverage=1.0)], [fact(2, meaning=0.9)], 10)
    assert close["close"] is True and close["judged"] is True and "note" not in close


def test_the_judge_is_the_second_model_or_the_third_voice() -> None:
    assert judged(0.45) == 0.45
    assert judged(None) is None  # the static model alone: no judge
    assert judged(0.2, 0.6) == 0.4 and judged(None, 0.6) == 0.6  # the third voice's items: its score
