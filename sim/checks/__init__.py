"""What a run folder must be, and the checks that hold every reader and writer to it: the
ledger of finished parts and the checks of a folder against it and its plan, at three depths
(``integrity``), what ``--resume`` keeps of a folder, bad parts set aside (``resume``),
what one part's Parquet footer and pages must say (``footers``), the shape
of a manifest and of a ledger line before anything uses them (``shape``), and whether a
folder was verified since it last changed (``verified``). Reading and writing the folders
is ``sim.store``'s; these modules decide whether what is there may be believed.

May import: ``sim.errors``, ``sim.files``, ``sim.cache``, ``sim.core`` (seating, checks).
"""

__all__ = ["footers", "integrity", "resume", "shape", "verified"]
