"""Tests of sim/report."""
