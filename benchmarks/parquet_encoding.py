"""What writing a rounds part costs under each Parquet encoding setting.

    python benchmarks/parquet_encoding.py [--games 50000] [--repeats 15]

Plays ``--games`` 4-player greedy games, builds their rounds table as ``simulate`` does
(``sim.store.io.rounds_table``) and writes it to memory under each setting, interleaved, CPU time
of this process; prints the median and best ns per round row and the bytes per row. The
settings: the project's (``sim.store.io.parquet_options``: byte-stream-split integers, LZ4),
snappy, zstd level 1, version-1 data pages and 4 MB pages. docs/speed.md quotes it.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import numpy as np
import pyarrow.parquet as pq

from sim.kernels.runner import lineup_of, play_batch
from sim.run.plan import rotation_for
from sim.store import io as sim_io
from strategies import parse_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=15)
    options = parser.parse_args()
    if options.games < 1 or options.repeats < 1:
        parser.error("--games and --repeats must be at least 1")
    lineup = lineup_of(4, [parse_spec("greedy")] * 4)
    ids = np.arange(options.games, dtype=np.int64)
    table = sim_io.rounds_table(play_batch(lineup, 1, ids, rotations=rotation_for(ids, 4)),
                                4, "run")
    rows = table.num_rows
    base = sim_io.parquet_options(table.schema)
    settings = {
        "project (lz4)": base,
        "snappy": {**base, "compression": "snappy"},
        "zstd level 1": {**base, "compression": "zstd", "compression_level": 1},
        "version-1 pages": {**base, "data_page_version": "1.0"},
        "4 MB pages": {**base, "data_page_size": 4 << 20},
    }
    seconds: dict[str, list[float]] = {name: [] for name in settings}
    size: dict[str, int] = {}
    for _ in range(options.repeats):
        for name, setting in settings.items():
            buffer = io.BytesIO()
            started = time.process_time()
            pq.write_table(table, buffer, **setting)
            seconds[name].append(time.process_time() - started)
            size[name] = buffer.tell()
    print(f"{rows:,} round rows ({options.games:,} games), {options.repeats} repeats")
    for name in settings:
        print(f"{name:16s} median {statistics.median(seconds[name]) / rows * 1e9:6.1f} ns/row"
              f"  best {min(seconds[name]) / rows * 1e9:6.1f}  {size[name] / rows:5.2f} B/row")


if __name__ == "__main__":
    main()
