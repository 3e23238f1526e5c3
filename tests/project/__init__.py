"""Checks of the whole repository: docs, the import graph, public and private names,
function sizes, and the scripts, benchmarks and examples run."""
