"""Runs: the RunService port, its in-process and daemon transports, review, loans and the pipeline's opening."""
