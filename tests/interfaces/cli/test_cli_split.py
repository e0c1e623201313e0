"""`hippo show` lists a fact's merged wordings and `hippo split` undoes a wrong merge."""

from __future__ import annotations

from cli_helpers import as_json, ok

import hippo


def test_show_lists_merged_wordings_and_split_makes_one_a_fact(cli, db_path, local_embedder):
    with hippo.open(db_path, agent_id="alice", embedder=local_embedder) as mem:
        first = mem.remember_facts("My daughter is named Mia.").facts[0]
        again = mem.remember_facts("I have a daughter called Mia.").facts[0]
    assert again.id == first.id

    shown = ok(cli("show", first.id, embedder="local")).stdout
    assert "merged wordings" in shown and again.fact in shown and "hippo split" in shown
    history = as_json(cli("show", first.id, "--json", embedder="local"))["history"]
    assert [m["content"] for m in history["merged"]] == [again.fact]

    new = as_json(cli("split", first.id, again.fact, "--json", embedder="local"))
    assert new["content"] == again.fact and new["kind"] == "fact" and new["id"] != first.id
    assert "merged wordings" not in ok(cli("show", first.id, embedder="local")).stdout

    refused = cli("split", first.id, again.fact, embedder="local")
    assert refused.exit_code != 0 and "was not merged" in refused.stderr
    missing = cli("split", "01J0000000000000000000000Z", "anything", embedder="local")
    assert missing.exit_code != 0 and "no memory" in missing.stderr
