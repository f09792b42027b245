"""The retrieval layer: the retrieval agent, context fusion and validation (docs/retrieval.md)."""
