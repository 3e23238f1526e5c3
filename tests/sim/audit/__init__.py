"""Tests of sim/audit."""
