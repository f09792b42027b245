"""What the pipeline runtime is opened with for a workspace: its workspace and models (``opening``), the
retrieval agent over the service's parts, each run's search scope, the MCP tools a client lends a session,
and the workflow catalog the fronts list and check."""
