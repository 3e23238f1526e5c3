"""Tests of sim/cli."""
