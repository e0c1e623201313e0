"""What the two relational stores share, written once: each capability's SQL (capture, experiences,
curation, merged wordings, keys and sessions, blocks, daily counters, chunk rows), parametrised by a
:class:`~hippo.stores.sql.dialect.Dialect` and run through a :class:`~hippo.stores.sql.database.SqlDatabase`
handle each backend gives its parts. The backends keep their connections, schemas, keyword and
vector search, and whatever their SQL really does differently."""
