"""Tests of strategies/learned."""
