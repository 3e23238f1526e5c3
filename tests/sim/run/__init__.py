"""Tests of sim/run."""
