"""Tests of sim/openings."""
