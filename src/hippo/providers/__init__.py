"""Embedding and LLM providers, looked up by name through :mod:`hippo.providers.registry`."""
