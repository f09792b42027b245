"""The workspace index as the service holds it: the daemon's index host (one writer thread), the index
opened by a one-shot command in this process, and the migration of an index into a Qdrant server."""
