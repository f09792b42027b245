"""The code-intel MCP server (``ided mcp``): language servers and Tree-sitter behind MCP tools."""
