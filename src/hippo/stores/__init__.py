"""Storage backends behind the :class:`hippo.core.ports.Store` protocol."""
