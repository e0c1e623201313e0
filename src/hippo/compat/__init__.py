"""Other memory libraries' APIs on hippo, so that moving to hippo changes an import, not every call.

- :mod:`hippo.compat.mem0`: mem0's ``Memory`` and ``AsyncMemory`` (``add``, ``search``, ``get``,
  ``get_all``, ``update``, ``delete``, ``delete_all``, ``history``, ``reset``), their arguments
  and their result shapes.

A compatibility API is a surface over the core: it opens its memory through
:func:`hippo.open` (the composition root) and calls ``Memory``'s operations, never a store.
"""
