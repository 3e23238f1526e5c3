"""The one exception type whose message is shown to users as is (one line, no traceback)."""


class SniffError(ValueError):
    """Bad input or an impossible request, explained in the message."""
