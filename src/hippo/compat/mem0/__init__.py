"""mem0's API on hippo: change ``from mem0 import Memory`` to ``from hippo.compat.mem0 import Memory``.

    from hippo.compat.mem0 import Memory

    m = Memory()                                   # hippo.open()'s database: ./hippo.db, the local model
    m.add("I am vegetarian and allergic to nuts.", user_id="alice")
    m.search("what can alice eat?", user_id="alice")   # {"results": [{"id", "memory", "score", ...}]}

Each (user_id, agent_id) pair is a hippo agent (``user:alice``, ``agent:bot``,
``user:alice:agent:bot``; ``runs`` for a run alone) and ``run_id`` a session of it, so hippo's
CLI, HTTP API, dashboard and agent tools see the same memories under those agent ids
(:mod:`hippo.core.curation.importers.mem0` has the rule). ``hippo data import --format mem0``
brings a mem0 ``get_all`` file into the same scopes, as facts.
"""

from __future__ import annotations

from hippo.compat.mem0.memory import AsyncMemory, Memory, MemoryNotFound

__all__ = ["AsyncMemory", "Memory", "MemoryNotFound"]
