"""Tests of sim/table."""
