"""The one progress bar of every command: counts on stderr, above which notices are written.

A run's games (``execute``), a study's deals (``sniff openings``), a report's chunks, a
verification's parts and a game's decisions (``sniff replay --analyze``) all draw it; what
differs is a description, a unit and whether it waits before showing (quick reads stay
silent). A bar that is not shown costs nothing: every method is then a no-op.
"""

from __future__ import annotations

import sys

__all__ = ["ProgressBar"]


class ProgressBar:
    """A bar on stderr, drawn only when ``shown`` (tqdm, imported when first drawn).

    ``total`` (None until known: :meth:`to` can give it), ``initial`` (a resume's games
    already played), ``delay`` (seconds before it appears), ``leave`` (keep the finished bar
    on screen), ``scale`` (1.2M rather than 1200000). Use it as a context manager.
    """

    def __init__(self, desc: str = "", unit: str = "it", *, shown: bool = True,
                 total: int | None = None, initial: int = 0, delay: float = 0,
                 leave: bool = True, scale: bool = False) -> None:
        self.bar = None
        if shown:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc or None, unit=unit,
                            unit_scale=scale, file=sys.stderr, leave=leave, delay=delay,
                            dynamic_ncols=True, smoothing=0.1)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def callback(self):
        """:meth:`to` while the bar is shown, else None (a caller then reports nothing)."""
        return self.to if self.bar is not None else None

    def add(self, count: int) -> None:
        """``count`` more done."""
        if self.bar is not None:
            self.bar.update(count)

    def to(self, done: int, total: int | None = None) -> None:
        """``done`` in all (of ``total``, when it is given): the callback ``(done, total)``
        that long functions report through."""
        if self.bar is not None:
            if total is not None:
                self.bar.total = total
            self.bar.update(done - self.bar.n)

    def note(self, text: str) -> None:
        """A short figure after the bar (a test's LLR, a precision's half-width)."""
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
