"""hippo inside other frameworks: each module needs that framework's extra (``langgraph``)."""
