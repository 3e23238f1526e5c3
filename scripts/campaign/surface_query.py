"""The ``query`` surface: SQL that tries to reach past a run's checked parts (files,
extensions, settings, other folders)."""

from __future__ import annotations

import re

from campaign_run import _mkfifo
from outcomes import Case

# ------------------------------------------------------------------ sniff query


def query_cases() -> list[Case]:
    cases = []

    def q(name, sql, *flags, expect="refuse", check=None, setup=None, timeout=90):
        def prepare(ctx):
            ctx.copy("run")
            ctx.protect(ctx.dir / "run")
            ctx.victim()
            if setup:
                setup(ctx)
        cases.append(Case("query", name, ["query", "run", sql, *flags], prepare, expect=expect,
                          check=check, timeout=timeout))
    victim = "victim.txt"
    q("COPY to a file", f"COPY (SELECT 1) TO '{victim}'")
    q("COPY to a new file", "COPY (SELECT 1) TO 'new.csv'",
      check=lambda c, o: "wrote new.csv" if (c.dir / "new.csv").exists() else None)
    q("ATTACH a database", "ATTACH 'x.db' AS x")
    q("INSTALL an extension", "INSTALL httpfs")
    q("LOAD an extension", "LOAD httpfs")
    q("read a file", "SELECT * FROM read_csv('/etc/passwd')")
    q("read a file as text", "SELECT * FROM read_text('/etc/hostname')")
    q("glob the file system", "SELECT * FROM glob('/etc/*')")
    q("switch external access on", "SET enable_external_access = true")
    q("raise the memory limit", "SET memory_limit = '100GB'")
    q("raise the threads", "SET threads = 1000")
    q("PRAGMA", "PRAGMA enable_profiling")
    q("EXPORT DATABASE", "EXPORT DATABASE 'exported'",
      check=lambda c, o: "exported" if (c.dir / "exported").exists() else None)
    q("two statements", f"SELECT 1; COPY (SELECT 1) TO '{victim}'")
    q("DROP a view, then read", "DROP VIEW games", expect="either",
      check=lambda c, o: None)
    q("CREATE a table", "CREATE TABLE t AS SELECT 1", expect="either", check=lambda c, o: None)
    q("a 10**12-row answer, shown", "SELECT * FROM range(1000000000000)", "--max-rows", "5",
      expect="either", check=lambda c, o: None, timeout=60)
    q("a 10**12-row answer, as CSV", "SELECT * FROM range(1000000000000)", "--csv",
      "--timeout", "5", timeout=60)
    q("a string of 2**31 bytes", "SELECT repeat('x', 2147483647) AS s", "--timeout", "30",
      timeout=90)
    # a top-1 of a billion rows streams in bounded memory: its answer, or (on a slow
    # machine) the time limit's one line, are both right
    q("a sort of 10**9 random rows", "SELECT * FROM range(1000000000) ORDER BY random() LIMIT 1",
      "--timeout", "20", timeout=90, expect="either",
      check=lambda c, o: None if re.search(r"\b\d{1,10}\b", o.out) else "no row")
    q("a cross join past memory", "SELECT list(a.range) FROM range(100000000) a, range(100) b",
      "--timeout", "30", timeout=90)
    q("--timeout 0", "SELECT 1", "--timeout", "0")
    q("--timeout nan", "SELECT 1", "--timeout", "nan")
    q("--timeout 10**20", "SELECT 1", "--timeout", str(10**20))
    q("getenv", "SELECT getenv('HOME')", expect="either", check=lambda c, o: None)
    q("SQL with a control character", "SELECT 1\x1b; DROP VIEW games")
    q("SQL of 120 KB", "SELECT " + "1+" * 60_000 + "1", timeout=90)
    q("a syntax error", "SELEC 1")
    q("--parquet to a FIFO", "SELECT 1", "--parquet", "fifo",
      setup=lambda c: _mkfifo(c.dir / "fifo"))
    q("--parquet into the run's games/", "SELECT 1", "--parquet", "run/games/x.parquet")
    q("--parquet to /dev/null", "SELECT 1", "--parquet", "/dev/null")
    q("--parquet through a link to the victim", "SELECT 1", "--parquet", "link.parquet",
      "--overwrite", setup=lambda c: (c.dir / "link.parquet").symlink_to(c.dir / victim))
    q("the answer's names with control characters", "SELECT 1 AS \"a\x1b[2J\nsniff: error: x\"",
      expect="either", check=lambda c, o: "raw ESC" if "\x1b" in o.out else None)
    q("a right count", "SELECT count(*) AS n FROM games", expect="ok",
      check=lambda c, o: None if re.search(r"\b200\b", o.out) else f"not 200: {o.out[-80:]}")
    return cases
