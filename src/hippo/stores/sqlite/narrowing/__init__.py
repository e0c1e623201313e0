"""What narrows a filtered search of the SQLite store to the rows its filter may pass without
reading every row of the agent: the filters' own indexes (``driving.py``), the listings kept across
searches (``supersets.py``), and the log of changed rows that keeps those listings, and the keyword
scores of ``bm25.py``, in step with the file (``changes.py``)."""
