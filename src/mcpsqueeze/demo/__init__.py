"""A deterministic demo / test-fixture MCP server (``python -m mcpsqueeze.demo.server``)."""
