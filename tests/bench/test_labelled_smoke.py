"""bench/labelled.py on one session (issue 48), so it keeps running; and every labelled session
keeps its format (no figures asserted: those are BENCHMARKS.md's)."""

from __future__ import annotations

from support import load_bench


def test_every_labelled_session_keeps_its_format():
    check = load_bench("labelled_sessions/check")
    assert check.main([]) == 0


def test_labelled_smoke():
    bench = load_bench("labelled")
    session = next(s for s in bench.load("dev") if s["id"].startswith("03"))
    report = bench.run([session], misses=True)
    for classifier in ("meaning", "reference"):
        row = report[classifier]
        assert 0 <= row["macro_f1"] <= 1 and row["must_survive"]["facts"] == len(session["must_survive"])
    assert report["meaning"]["must_survive"]["with_session"] == 1.0
    assert set(report["trivial_stored_by_capture"]) == {session["id"]}


def test_labelled_model_smoke(tmp_path):
    bench = load_bench("labelled_model")
    sessions = [s for s in load_bench("labelled").load("dev") if s["id"][:2] in ("01", "03", "04")]
    report = bench.run("fake", sessions, cache=tmp_path)
    assert report["rules"]["macro_f1"] > 0 and set(report["where the markers miss"]) == set(map(str, bench.THRESHOLDS))
    assert 0 <= report["model"]["macro_f1"] <= 1 and 0 <= report["model + rules"]["decisions_recalled"] <= 1
    assert list(tmp_path.glob("labelled-fake-*.npz")), "the vectors are cached"
