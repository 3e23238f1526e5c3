"""Tests of sim/env."""
