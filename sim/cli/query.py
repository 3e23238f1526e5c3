"""The ``sniff query`` command line (``sim.cli.main`` adds it to the ``sniff`` group).

Its own module to keep ``sim.cli.main`` short; the work is in ``sim.store.answer`` (the folder
and the answer's output) and ``sim.store.query`` (the locked, read-only DuckDB connection).
"""

from __future__ import annotations

from pathlib import Path

import click

from sim.cli.options import TextPath

__all__: list[str] = []  # nothing here is used outside sim.cli


@click.command()
@click.argument("folder", metavar="FOLDER", type=click.Path(path_type=Path))
@click.argument("sql", metavar="SQL")
@click.option("--csv", "as_csv", is_flag=True, help="Print every row as CSV (streamed).")
@click.option("--parquet", "parquet", type=TextPath(dir_okay=False, path_type=Path),
              metavar="OUT",
              help="Write every row to the Parquet file OUT (a new file) instead.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.option("--max-rows", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Rows of the aligned table printed (--csv and --parquet give all).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=600, show_default=True,
              metavar="SECONDS", help="Stop the query after this long (one line, exit 2).")
def query(folder: Path, sql: str, as_csv: bool, parquet: Path | None, overwrite: bool,
          max_rows: int, timeout: float) -> None:
    """Answer SQL about a run folder (tables games, rounds), an openings folder (its
    tables: openings, games) or an analysis folder (decisions, curve), read-only, in
    bounded memory.

    The tables are views over the folder's checked parts (DuckDB SQL; one SELECT).
    Example: sniff query results/NAME "SELECT end_reason, count(*) FROM rounds GROUP BY ALL".
    Prints an aligned table of the first --max-rows rows; --csv prints all rows as CSV;
    --parquet OUT writes them to a Parquet file. See docs/query.md.
    """
    from sim.analyze.folder import is_analysis_folder
    from sim.analyze.folder import table_files as analysis_tables
    from sim.display.formatting import printable
    from sim.errors import SniffError
    from sim.openings.folder import is_openings_folder, table_files
    from sim.store.answer import QueryLimits, answer

    if as_csv and parquet is not None:
        raise SniffError("--csv and --parquet exclude each other")
    if overwrite and parquet is None:
        raise SniffError("--overwrite replaces the --parquet file; give --parquet OUT")
    sources = None
    if is_openings_folder(folder):  # its tables, checked against its summary.json
        sources = {name: files for name, files in table_files(folder).items()
                   if files and files[0].suffix == ".parquet"}
    elif is_analysis_folder(folder):  # sniff analyze: its recorded parts, checked
        sources = analysis_tables(folder)
    elif (folder / "manifest.json").is_file():  # a compare run's decision, as verify checks it
        from sim.audit.stops import require_recorded_stop
        from sim.store.io import open_run, read_manifest

        if read_manifest(folder)["config"].get("sequential") is not None:
            require_recorded_stop(open_run(folder))
    answer(folder, sql, csv=as_csv, parquet=parquet, overwrite=overwrite, max_rows=max_rows,
           sources=sources, limits=QueryLimits(timeout=timeout, hard_memory=True),
           notice=lambda line: click.echo(printable(f"sniff: note: {line}", one_line=True),
                                             err=True))
