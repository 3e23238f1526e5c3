"""Tests of sim/compare."""
