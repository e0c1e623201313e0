"""Seed 001's calculateImportance, every type and adjustment; the context ids recall_related reads;
the consolidation triggers. (The pruning rule's age, with an injected clock:
tests/contract/experiences/test_experiences.py.)"""

from __future__ import annotations

import pytest

from hippo.core.experiences import consolidation
from hippo.core.experiences.importance import TYPE_WEIGHTS, calculate_importance, check_type, context_refs
from hippo.errors import InvalidInput

SEED_WEIGHTS = {"chat": 0.6, "observation": 0.4, "task": 0.7, "decision": 0.8, "tool-use": 0.7, "error": 0.9,
                "insight": 0.85}


@pytest.mark.parametrize("kind", list(SEED_WEIGHTS))
def test_each_type_starts_at_its_seed_weight(kind):
    assert TYPE_WEIGHTS[kind] == SEED_WEIGHTS[kind]
    assert calculate_importance(kind) == SEED_WEIGHTS[kind]
    assert calculate_importance(kind, {"unrelated": True, "mentionedMe": False}) == SEED_WEIGHTS[kind]


@pytest.mark.parametrize(("flag", "snake", "bonus"), [("mentionedMe", "mentioned_me", 0.2),
                                                      ("userDirectMessage", "user_direct_message", 0.15),
                                                      ("actionTaken", "action_taken", 0.1),
                                                      ("errorRecovered", "error_recovered", 0.15)])
def test_each_adjustment_adds_its_bonus(flag, snake, bonus):
    assert calculate_importance("observation", {flag: True}) == pytest.approx(0.4 + bonus)
    assert calculate_importance("observation", {snake: 1}) == pytest.approx(0.4 + bonus)
    assert calculate_importance("observation", {flag: True, snake: True}) == pytest.approx(0.4 + bonus)  # once


def test_adjustments_add_up_and_clamp_to_one():
    every = {"mentionedMe": True, "userDirectMessage": True, "actionTaken": True, "errorRecovered": True}
    assert calculate_importance("observation", every) == pytest.approx(1.0)  # 0.4 + 0.6
    assert calculate_importance("chat", {"mentionedMe": True, "userDirectMessage": True}) == pytest.approx(0.95)
    assert calculate_importance("error", every) == 1.0


def test_types_are_checked():
    assert check_type("Tool_Use") == "tool-use"
    with pytest.raises(InvalidInput, match="unknown experience type"):
        check_type("dream")


def test_context_ids_in_seed_and_snake_case_spellings():
    assert context_refs({"senderId": "u1", "roomId": 7, "taskId": "t"}) == {"user": "u1", "room": "7", "task": "t"}
    assert context_refs({"user_id": "u2", "room_id": "r"}) == {"user": "u2", "room": "r"}
    assert context_refs({"userId": "a", "senderId": "b"}) == {"user": "a"}  # userId first
    with pytest.raises(InvalidInput):
        context_refs({"userId": ["x"]})


def test_triggers_follow_seed_001():
    from types import SimpleNamespace

    settings = SimpleNamespace(short_term_size=100)
    def entry(importance):
        return SimpleNamespace(importance=importance)
    assert consolidation.due(entry(0.7), 1, settings) and not consolidation.due(entry(0.69), 80, settings)
    assert consolidation.due(entry(0.1), 81, settings)
