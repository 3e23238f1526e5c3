"""Tests of sim/tune."""
