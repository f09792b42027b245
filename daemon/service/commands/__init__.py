"""The work behind one-shot commands that are not a front's request: ided eval, ided cve."""
