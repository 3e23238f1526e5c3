"""Tests of sim/display."""
