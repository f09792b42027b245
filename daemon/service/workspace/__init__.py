"""The Workspace port's transports (in process, hosted, over the daemon) and the workspace index host."""
