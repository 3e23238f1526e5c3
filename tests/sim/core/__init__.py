"""Tests of sim/core."""
