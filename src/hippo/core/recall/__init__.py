"""Recall: candidates by meaning and by keyword, fused, filtered, scored and reranked."""
