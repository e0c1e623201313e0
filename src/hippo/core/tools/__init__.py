"""The agent tools: what a model may call on one memory, each with its description, its arguments
as JSON Schema and a call that answers with a structured result (:mod:`~hippo.core.tools.toolset`,
the arguments in :mod:`~hippo.core.tools.args`); their shapes for OpenAI and Anthropic tool calling
(:mod:`~hippo.core.tools.formats`); and the capture tools a client that drives a session calls
over MCP (:mod:`~hippo.core.tools.capture`). The ways in (MCP, HTTP, the integrations) offer these;
the composition root builds each memory's toolset."""
