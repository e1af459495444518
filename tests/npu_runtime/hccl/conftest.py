"""Fixtures for the hccl tests (helpers live in hccl_support)."""

from hccl_support import no_leftovers

__all__ = ["no_leftovers"]
