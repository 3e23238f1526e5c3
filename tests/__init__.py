"""The test suite: tests/sim and tests/strategies mirror the packages (a module's tests in
``tests/<package>/<room>/test_<module>.py``), tests/project checks the whole repository,
tests/helpers holds what they share (docs/testing.md)."""
