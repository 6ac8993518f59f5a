"""The sync pipeline: the vault read, chunked, embedded and written, at start, on watched changes and on request."""
