"""The workspace daemon as a process: its server (the composition of the index, intel and run hosts on
one socket) and the command line's ways to run, stop and ask it (``process``)."""
