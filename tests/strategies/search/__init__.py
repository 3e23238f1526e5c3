"""Tests of strategies/search."""
