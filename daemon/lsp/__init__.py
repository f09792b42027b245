"""The LSP front: ``ided lsp``, a pygls language server that attaches to the workspace daemon."""
