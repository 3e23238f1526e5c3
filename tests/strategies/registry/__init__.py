"""Tests of strategies/registry."""
