"""The ways in: agent tools, MCP, HTTP, CLI. Each depends on the core, never the reverse."""
