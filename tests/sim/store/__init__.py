"""Tests of sim/store."""
