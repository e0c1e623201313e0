"""The audit trail: a hash-chained record of every change to an agent's memory.

What a record holds. Each change appends one record to its agent's trail: when (the memory's
clock), the agent, who acted (an API key's id, ``"local"`` for an embedded call) and through which
surface (``python``, ``http``, ``mcp``, ``cli``, ``dashboard``, ``tools``), the operation (the
public name the caller used: ``store_memory``, ``forget_memory``, ``set_memory_block``, ...; one
``operation_id`` per call), the ids it touched with a digest of their content, and counts by what
was done (inserted, superseded, rewritten, deleted, ...). Never the text.

Where it is hooked, so no change can skip its record. Every public operation is an
:class:`~hippo.core.operation.Operation`, which opens a scope (a context variable
holding the operation's name, its id and the actor: the contract with the stores,
:mod:`hippo.core.ports.audit`). Every write a store makes goes through its
handle's ``writing(agent_id)`` (``stores/sql/database.py``), which notes the agent as changed in
the open transaction; write methods add the ids and digests they touched. Just before the write
transaction commits, the handle appends one record per changed agent (``stores/audit.py``), in
that same transaction: a change never commits without its record, and a record never outlives a
rolled-back change. An operation that commits once leaves one record; one that commits in several
transactions (a batch import, consolidation) leaves one record per transaction, all with the same
``operation_id``. A write made on a store outside any operation is recorded as
``direct_store_write``.

What is not a change. A recall that touches its hits raises their access counts and intensity
and strengthens co-recall links: retrieval bookkeeping, written behind the answer by the store's
queue (``stores/retrievals.py``), inside :func:`~hippo.core.ports.audit.unaudited`. It changes no content and
recalls would otherwise double the trail's size; ``reinforce_memory`` and ``demote_memory`` (the
agent's explicit feedback) are changes and are recorded. Dashboard logins are not changes to an
agent's memory; creating and deleting API keys are, recorded in the database's own chain ``*``.

The chain (:mod:`hippo.core.ports.audit`, checked by :mod:`.chain`). Each record carries the
hash of the one before (``prev_hash``) and its
own: SHA-256 over the canonical JSON of its fields. A head row per agent (``audit_heads``) holds
the newest record's seq and hash; appending reads and writes it in the change's transaction, on
PostgreSQL under an advisory lock on the chain, so servers writing one agent at once queue and
never fork it. ``verify_audit`` recomputes every hash and link and compares the end to the head:
an altered, removed or reordered record is named by its seq.

Retention. ``audit_retention_days`` (None: keep everything) is applied by ``trim_audit``: it
removes a run of the oldest records and appends a checkpoint record holding the last removed
record's seq and hash, signed with an HMAC keyed by the database's secret. The first remaining
record must then link to a signed checkpoint's hash, or be the chain's first.

Digests and the secret. A digest is an HMAC of the memory's content hash
(:mod:`hippo.core.hashing`) keyed by a random secret per database (``audit_secret``, outside the
trail's table): two databases holding the same text show different digests, and a table of known
texts' hashes made elsewhere matches nothing. Whoever has the whole database has the secret too:
they can confirm a guess of a short forgotten text from its digest, and they can rewrite the
trail and its heads and re-sign a checkpoint. The chain detects accidental edits and partial
tampering (a row altered or removed by someone who does not recompute everything after it); it
is not a defence against someone holding the whole file. For that, export the heads elsewhere.
"""

from hippo.core.ports.audit import Actor, acting_as, actor, operation, set_actor, unaudited

__all__ = ["Actor", "acting_as", "actor", "operation", "set_actor", "unaudited"]
