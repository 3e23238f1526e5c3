"""Tests of sim/kernels."""
