"""The workspace daemon as a process and its wire: server, client, socket files, JSON-RPC, the method table."""
