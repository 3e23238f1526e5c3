"""Tests of sim/checks."""
