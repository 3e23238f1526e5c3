"""Tests of sim/hint."""
