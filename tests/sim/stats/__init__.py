"""Tests of sim/stats."""
