"""Domain models and ports. Imports only the standard library and pydantic."""
