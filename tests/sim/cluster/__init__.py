"""Tests of sim/cluster."""
