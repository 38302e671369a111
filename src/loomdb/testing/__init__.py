"""Test suites a storage backend author runs against their own backend.

    import unittest
    from loomdb.testing import StorageConformance

    class TestMyBackend(StorageConformance, unittest.TestCase):
        def make_store(self):
            return open_my_backend(...)   # a fresh, empty (Backend, BlobStore)

Runs under unittest or pytest; nothing here imports pytest. See docs/architecture.md,
"Storage seams".
"""

from __future__ import annotations

from .storage import StorageConformance

__all__ = ["StorageConformance"]
