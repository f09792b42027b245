"""Code intelligence and search: the capability registry, the code-intel service behind it, name resolution."""
