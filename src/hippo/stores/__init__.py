"""Storage backends behind the :class:`hippo.stores.base.Store` protocol."""
