"""Tests of sim/analyze."""
