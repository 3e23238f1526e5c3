"""Tests of sim/reference."""
