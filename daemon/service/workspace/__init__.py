"""The ``Workspace`` port's transports: in this process, hosted by the daemon for its own runs, over the
daemon's socket, and the handle that answers while one of them opens; and the workspace a command holds."""
