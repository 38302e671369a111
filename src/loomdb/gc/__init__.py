"""Garbage collection: contents and blobs that nothing reachable uses (see service)."""
