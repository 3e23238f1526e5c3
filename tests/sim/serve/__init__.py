"""Tests of sim/serve."""
