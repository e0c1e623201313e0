"""A chat loop in which the model keeps its own long-term memory through hippo's tools.

    python examples/agent_loop.py                     # offline: a scripted model, ./agent-demo.db
    python examples/agent_loop.py --llm openai:gpt-4o-mini      # OPENAI_API_KEY (OPENAI_BASE_URL for Ollama, vLLM...)
    python examples/agent_loop.py --llm anthropic:claude-haiku-4-5   # ANTHROPIC_API_KEY

With a real model you type; the offline run plays a short scripted conversation
in which the model stores, recalls, edits a memory block and forgets, all
through tool calls, and prints every step.
"""

from __future__ import annotations

import argparse
import json
import sys

import hippo
from hippo.providers.base import Message, ToolCall, ToolCallingLLM
from hippo.providers.fake import FakeLLM
from hippo.providers.registry import create_llm

SYSTEM = (
    "You are a helpful assistant with a long-term memory. Use remember_facts when the user tells you something "
    "about themselves, recall_memories before answering questions about the past, the 'human' memory block for "
    "stable details about the user, and forget_memory when they ask you to forget."
)


def agent_turn(llm: ToolCallingLLM, tools: hippo.Toolset, history: list[Message], user_text: str, *,
               system: str = SYSTEM, max_steps: int = 8, show=None) -> str:
    """One user message: let the model call tools until it answers in text; returns the answer."""
    history.append(Message("user", user_text))
    for _ in range(max_steps):
        turn = llm.chat(system, history, tools)
        history.append(turn.as_message())
        if not turn.tool_calls:
            return turn.text
        for call in turn.tool_calls:
            result = tools.call(call.name, call.arguments)
            if show:
                show(f"  tool {call.name}({json.dumps(call.arguments, ensure_ascii=False)}) -> "
                     f"{json.dumps(result, ensure_ascii=False)[:160]}")
            history.append(Message("tool", json.dumps(result, ensure_ascii=False), tool_call_id=call.id))
    return "(stopped: too many tool calls in one turn)"


def _last_tool_result(messages: list[Message]) -> dict:
    return json.loads(next(m.content for m in reversed(messages) if m.role == "tool"))


def scripted_model() -> FakeLLM:
    """The offline model: a fixed script of tool calls and answers for DEMO_CONVERSATION."""
    def recalled(system: str, messages: list[Message]) -> str:
        memories = _last_tool_result(messages).get("memories", [])
        return "You told me: " + "; ".join(m["content"] for m in memories) if memories else "I don't know yet."

    return FakeLLM(script=[
        ToolCall("c1", "remember_facts", {"text": "I'm Kris, I live in Berlin and I'm allergic to peanuts."}),
        ToolCall("c2", "append_memory_block", {"key": "human", "text": "Name: Kris"}),
        "Nice to meet you, Kris! I'll remember that.",
        ToolCall("c3", "store_memory", {"content": "Kris asked for a vegan lasagne recipe without nuts",
                                        "tags": ["recipe"]}),
        "Noted. Here is a nut-free vegan lasagne...",
        ToolCall("c4", "recall_memories", {"query": "Where does Kris live?", "limit": 3}),
        recalled,
        [ToolCall("c5", "remember_facts", {"text": "I moved to Lisbon."}),
         ToolCall("c6", "replace_memory_block", {"key": "human", "old_text": "Name: Kris",
                                                 "new_text": "Name: Kris (lives in Lisbon)"})],
        "Lisbon! Updated.",
        ToolCall("c7", "forget_memory", {"description": "lasagne recipe"}),
        "Done, I forgot the recipe request.",
    ])


DEMO_CONVERSATION = [
    "Hi! I'm Kris, I live in Berlin and I'm allergic to peanuts.",
    "Can you give me a vegan lasagne recipe without nuts?",
    "Where do I live again?",
    "Actually, I moved to Lisbon last month.",
    "Please forget the lasagne thing.",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llm", default="fake", help="openai:<model>, anthropic:<model>, or fake (scripted, offline)")
    ap.add_argument("--db", default="agent-demo.db")
    ap.add_argument("--agent", default="demo")
    args = ap.parse_args(argv)
    try:
        llm = scripted_model() if args.llm == "fake" else create_llm(args.llm)
        with hippo.open(args.db, agent_id=args.agent) as mem:
            tools, history = mem.tools(), []
            lines = iter(DEMO_CONVERSATION) if args.llm == "fake" else iter(lambda: input("you> "), "/quit")
            for line in lines:
                if args.llm == "fake":
                    print(f"you> {line}")
                print("assistant>", agent_turn(llm, tools, history, line, show=print))
            print("human block:", mem.recall_memory_block("human"))
    except (hippo.HippoError, EOFError, KeyboardInterrupt) as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
