"""How a process reaches its workspace daemon: the socket and record files, the JSON-RPC connection, the
client that attaches (starting the daemon when asked), the link that re-attaches, the method table, and
the one place that decides whether this process uses the daemon or works here (``daemon_or_here``)."""
