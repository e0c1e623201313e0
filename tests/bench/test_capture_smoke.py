"""bench/capture.py, small: a tiny synthetic conversation in LoCoMo's format through observe and
process_pending beside raw turns, and the observe timing with the sleeping fake LLM (no timing
asserts beyond "observe never called the LLM")."""

from __future__ import annotations

import json

from support import load_bench

SESSIONS = [
    [("Caroline", "Hey Mel, good to see you!"),
     ("Melanie", "I went to a pottery class last Saturday and made a blue bowl for my kids."),
     ("Caroline", "Thanks!"),
     ("Caroline", "I am researching adoption agencies because I want to give a child a loving home."),
     ("Melanie", "Wow"),
     ("Melanie", "We are going camping at the lake with the whole family next month.")],
    [("Melanie", "Hi!"),
     ("Melanie", "I went to a pottery class last Saturday and made a blue bowl for my kids"),  # said again
     ("Caroline", "The adoption agency interview went well, they liked our home visit."),
     ("Caroline", "Cool"),
     ("Melanie", "The camping trip was at Lake Tahoe and the kids loved the stars.")],
]


def _conversation() -> list[dict]:
    sessions = {}
    for n, date in ((1, "1:56 pm on 8 May, 2023"), (2, "10:37 am on 27 June, 2023")):
        sessions[f"session_{n}"] = [{"speaker": s, "dia_id": f"D{n}:{i}", "text": t}
                                    for i, (s, t) in enumerate(SESSIONS[n - 1], start=1)]
        sessions[f"session_{n}_date_time"] = date
    qa = [{"question": "What did Melanie make at the pottery class?", "evidence": ["D1:2"], "category": 4},
          {"question": "How did the adoption agency interview go?", "evidence": ["D1:4", "D2:3"], "category": 1},
          {"question": "Where did Melanie's family go camping?", "evidence": ["D1:6", "D2:5"], "category": 2},
          {"question": "When did Melanie say again that she made a bowl?", "evidence": ["D2:2"], "category": 4},
          {"question": "What did Caroline say about football?", "evidence": ["D1:1"], "category": 5}]
    return [{"sample_id": "conv-test", "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
                                                         **sessions}, "qa": qa}]


def test_capture_smoke(capsys, tmp_path):
    data = tmp_path / "tiny-locomo.json"
    data.write_text(json.dumps(_conversation()))
    script = load_bench("capture")
    assert script.main(["--data", str(data), "--embedder", "fake", "--speed-messages", "40",
                        "--experiment", "same_importance", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    recall = out["recall"]
    raw, cap = recall["rows"]["raw turns (locomo.py defaults)"], recall["rows"]["capture (offline)"]
    assert raw["memories"] == 11
    # four small-talk turns stay out, and the pottery bowl said again strengthens the memory held
    assert cap["memories"] == 5 and cap["capture"]["merged"] == 1  # "Hey Mel, good to see you!" is a greeting
    assert cap["capture"]["observed"] == 11 and cap["capture"]["messages"] == 11
    # the question on the repeat finds it through the held memory's source_ids
    assert recall["errors"]["evidence_turns"] == {"kept": 5, "merged": 1}
    assert cap["by_category"]["4"]["R@10"] == 1.0
    assert recall["source_ids_checked"]["hits"] > 0 and recall["source_ids_checked"]["mismatched"] == 0
    for row in recall["rows"].values():
        assert 0.0 <= row["R@5"] <= row["R@10"] <= row["R@20"] <= 1.0
    assert "EXPERIMENT same_importance" in recall["rows"]
    mean, low, high = recall["r10_margin_capture_minus_raw"]
    assert low <= mean <= high
    speed = out["speed"]
    assert speed["llm_calls_during_observe"] == 0
    for key in ("observe_batch_1", "observe_batch_20", "sqlite_batch_1", "sqlite_batch_20"):
        assert speed[key]["msgs_per_s"] > 0 and speed[key]["p50_ms"] <= speed[key]["p95_ms"]
    assert speed["observe_batch_1"]["accepted"] == speed["observe_batch_20"]["accepted"] == 40
    assert speed["process_pending_with_llm"]["llm_calls"] >= 1
    assert speed["process_pending_offline"]["messages"] == 40
