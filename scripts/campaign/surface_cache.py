"""The ``cache`` surface: forged generated modules, numba index and data files, locks and
markers of the background compile, a cache folder of another owner or on a link."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from campaign_run import SIM, Campaign, _chown_tree, _mkfifo, _same_games
from outcomes import NOBODY, Case, Context

# ------------------------------------------------------------------ the cache


class _Pickled:
    """A pickle whose loading runs the code given (what a forged numba cache file holds)."""

    def __init__(self, code: str) -> None:
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


NAMES_CODE = """
import json
from sim.kernels import generate
from strategies import get
print(json.dumps({"engine": generate.engine_path().stem,
                  "greedy": generate.chooser_path(get("greedy")).stem,
                  "random": generate.chooser_path(get("random")).stem}))
"""


def _names(campaign: Campaign) -> dict[str, str]:
    """The generated modules' names in the base cache as the code the cases run names them
    (``--code``: another checkout's engine is another module): the engine, greedy's and
    random's wrappers, what the command of the cache cases loads. Named by this process's
    code, the cache cases of another checkout tampered with files it never reads."""
    done = subprocess.run([sys.executable, "-P", "-c", NAMES_CODE], capture_output=True,
                          text=True, env=dict(campaign.env, SNIFF_CACHE_DIR=str(campaign.cache)),
                          check=True)
    return json.loads(done.stdout)


NAMES: dict[str, str] = {}


def kernel_file(ctx: Context, which: str, suffix: str = ".py") -> Path:
    return ctx.cache() / "kernels" / f"{NAMES[which]}{suffix}"


def numba_file(ctx: Context, which: str, function: str, kind: str) -> Path:
    """A numba cache file of a generated module: ``kind`` ``nbi`` (the index) or ``nbc``."""
    folder = ctx.cache() / "kernels" / "__pycache__"
    pattern = f"{NAMES[which]}.{function}-*.{kind}" if kind == "nbi" else \
        f"{NAMES[which]}.{function}-*.1.nbc"
    found = sorted(folder.glob(pattern))
    if not found:
        raise SystemExit(f"campaign: the base cache lacks {pattern}")
    return found[0]


def forge_module(which: str, how: str) -> Callable:
    """Setups that tamper with a generated module."""
    def setup(ctx: Context) -> None:
        path = kernel_file(ctx, which)
        text = path.read_text()
        times = (path.stat().st_atime, path.stat().st_mtime)
        if how == "payload":
            path.write_text(ctx.payload() + text)
        elif how == "payload-end":
            path.write_text(text + "\n" + ctx.payload())
        elif how == "empty":
            path.write_text("")
        elif how == "half":
            path.write_text(text[: len(text) // 2])
        elif how == "garbage":
            path.write_bytes(b"\xff\xfe\x00garbage\x00" * 100)
        elif how == "fifo":
            path.unlink()
            _mkfifo(path)
            return
        elif how == "folder":
            path.unlink()
            path.mkdir()
            return
        elif how == "link-payload":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(ctx.payload() + text)
            path.unlink()
            path.symlink_to(outside)
            return
        elif how == "link-same":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(text)
            path.unlink()
            path.symlink_to(outside)
            return
        elif how == "link-zero":
            path.unlink()
            path.symlink_to("/dev/zero")
            return
        elif how == "hardlink-payload":
            outside = ctx.dir / "elsewhere.py"
            outside.write_text(ctx.payload() + text)
            path.unlink()
            os.link(outside, path)
        elif how == "other-owner":
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            os.chown(path, NOBODY, NOBODY)
            return
        elif how == "world-writable":
            os.chmod(path, 0o666)
            return
        os.utime(path, times)  # numba's cache is keyed by the source's mtime and size
    return setup


def forge_numba(which: str, function: str, kind: str, how: str) -> Callable:
    def setup(ctx: Context) -> None:
        path = numba_file(ctx, which, function, kind)
        data = path.read_bytes()
        if how == "truncate":
            path.write_bytes(data[: len(data) // 3])
        elif how == "empty":
            path.write_bytes(b"")
        elif how == "garbage":
            path.write_bytes(os.urandom(len(data)))
        elif how == "fifo":
            path.unlink()
            _mkfifo(path)
        elif how == "folder":
            path.unlink()
            path.mkdir()
        elif how == "link-zero":
            path.unlink()
            path.symlink_to("/dev/zero")
        elif how == "pickle-own":  # a copy of someone else's cache, made one's own: the
            # index's first pickle (numba's version) replaced, so the file is still two
            import io
            import pickle
            import pickletools

            stream = io.BytesIO(data)
            for _ in pickletools.genops(stream):
                pass
            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data[stream.tell():])
        elif how == "pickle-other-owner":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            os.chown(path, NOBODY, NOBODY)
        elif how == "pickle-world-writable-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            os.chmod(path.parent, 0o777)
        elif how == "pickle-other-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            _chown_tree(path.parent, NOBODY)
        elif how == "pickle-linked-folder":
            import pickle

            path.write_bytes(pickle.dumps(_Pickled(ctx.payload())) + data)
            elsewhere = ctx.dir / "their-pycache"
            shutil.move(path.parent, elsewhere)
            _chown_tree(elsewhere, NOBODY)
            (ctx.cache() / "kernels" / "__pycache__").symlink_to(elsewhere)
    return setup


def forge_lock(which: str, how: str) -> Callable:
    """A chooser's compile lock, with its compiled code removed so that it compiles."""
    def setup(ctx: Context) -> None:
        for path in (ctx.cache() / "kernels" / "__pycache__").glob(f"{NAMES[which]}.*"):
            path.unlink()
        lock = kernel_file(ctx, which, ".lock")
        lock.unlink(missing_ok=True)
        if how == "fifo":
            _mkfifo(lock)
        elif how == "link-victim":
            lock.symlink_to(ctx.victim())
        elif how == "folder":
            lock.mkdir()
        elif how == "link-fifo":
            lock.symlink_to(_mkfifo(ctx.dir / "fifo"))
    return setup


def forge_precompile(how: str) -> Callable:
    def setup(ctx: Context) -> None:
        kernels = ctx.cache() / "kernels"
        for done in kernels.glob("precompile-*"):
            done.unlink()
        ctx.env["SNIFF_PRECOMPILE"] = "1"
        if how == "lock-fifo":
            _mkfifo(kernels / "precompile.lock")
        elif how == "lock-link-fifo":
            (kernels / "precompile.lock").symlink_to(_mkfifo(ctx.dir / "fifo"))
        elif how == "lock-zero":
            (kernels / "precompile.lock").symlink_to("/dev/zero")
        elif how == "log-fifo":
            _mkfifo(kernels / "precompile.log")
        elif how == "log-link-victim":
            (kernels / "precompile.log").unlink(missing_ok=True)
            (kernels / "precompile.log").symlink_to(ctx.victim())
        elif how == "log-folder":
            (kernels / "precompile.log").unlink(missing_ok=True)
            (kernels / "precompile.log").mkdir()
        elif how == "done-fifo":
            _mkfifo(kernels / f"precompile-{NAMES['engine']}.done")
    return setup


def cache_at(how: str) -> Callable:
    """SNIFF_CACHE_DIR pointed somewhere odd (a copy of the cache where it is a folder)."""
    def setup(ctx: Context) -> None:
        if how == "file":
            (ctx.dir / "cachefile").write_text("x")
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / "cachefile")
        elif how == "devnull":
            ctx.env["SNIFF_CACHE_DIR"] = "/dev/null"
        elif how == "fifo":
            ctx.env["SNIFF_CACHE_DIR"] = str(_mkfifo(ctx.dir / "cachefifo"))
        elif how == "relative":
            ctx.cache()
            ctx.env["SNIFF_CACHE_DIR"] = "cache"
        elif how == "newline":
            shutil.copytree(ctx.campaign.cache, ctx.dir / "ca\nche\x1b[31m", symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / "ca\nche\x1b[31m")
        elif how == "non-utf8":
            name = os.fsdecode(b"cache-\xff\xfe")
            shutil.copytree(ctx.campaign.cache, ctx.dir / name, symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir / name)
        elif how == "too-long":
            ctx.env["SNIFF_CACHE_DIR"] = str(ctx.dir) + ("/" + "x" * 300) * 20
        elif how == "proc":
            ctx.env["SNIFF_CACHE_DIR"] = "/proc/self"
        elif how == "empty-env":
            home = ctx.dir / "home" / ".cache"
            home.mkdir(parents=True)
            shutil.copytree(ctx.campaign.cache, home / "sniff", symlinks=True)
            ctx.env["SNIFF_CACHE_DIR"] = ""
        elif how == "other-owner":
            _chown_tree(ctx.cache(), NOBODY)
        elif how == "kernels-other-owner":
            _chown_tree(ctx.cache() / "kernels", NOBODY)
        elif how == "world-writable":
            os.chmod(ctx.cache(), 0o777)
            os.chmod(ctx.cache() / "kernels", 0o777)
            path = kernel_file(ctx, "engine")
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)  # what anyone could have written there
            os.utime(path, times)
        elif how == "kernels-link-other":
            elsewhere = ctx.dir / "their-kernels"
            shutil.move(ctx.cache() / "kernels", elsewhere)
            path = elsewhere / f"{NAMES['engine']}.py"
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            _chown_tree(elsewhere, NOBODY)
            (ctx.cache() / "kernels").symlink_to(elsewhere)
        elif how == "nobody-unwritable":  # the command runs as nobody: a cache it cannot write
            ctx.cache()
            for folder in [ctx.dir, ctx.dir / "home"]:
                os.chmod(folder, 0o755)
            ctx.cwd = ctx.dir / "home"
            os.chown(ctx.cwd, NOBODY, NOBODY)
        elif how in ("tmp-squatted", "tmp-world-writable"):
            # HOME cannot be written, so the cache falls back to TMPDIR/sniff-cache-UID
            ctx.env.pop("SNIFF_CACHE_DIR")
            ctx.env["HOME"] = "/nonexistent"
            tmp = ctx.dir / "tmp"
            tmp.mkdir()
            os.chmod(tmp, 0o1777)
            os.chmod(ctx.dir, 0o755)
            ctx.env["TMPDIR"] = str(tmp)
            squat = tmp / f"sniff-cache-{NOBODY}"
            shutil.copytree(ctx.campaign.cache, squat, symlinks=True)
            path = squat / "kernels" / f"{NAMES['engine']}.py"
            text, times = path.read_text(), (path.stat().st_atime, path.stat().st_mtime)
            path.write_text(ctx.payload() + text)
            os.utime(path, times)
            os.chmod(ctx.dir / "home", 0o777)
            ctx.cwd = ctx.dir / "home"
            if how == "tmp-squatted":
                _chown_tree(squat, 1)  # daemon: another user got there first
            else:
                _chown_tree(squat, 0)
                for folder in [squat, *squat.rglob("*")]:
                    if folder.is_dir():
                        os.chmod(folder, 0o777)
    return setup


def learned_forged(how: str) -> Callable:
    def setup(ctx: Context) -> None:
        ctx.copy("model.npz")
        learned = ctx.cache() / "learned"
        digest_ = hashlib.sha256((ctx.dir / "model.npz").read_bytes()).hexdigest()[:16]
        copy, module = learned / f"model_{digest_}.npz", learned / f"sniff_learned_{digest_}.py"
        if how == "model-swapped":  # another network of 2 players under this model's name
            import numpy as np

            with np.load(copy, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
            first = next(k for k, v in arrays.items() if v.dtype.kind == "f" and v.ndim == 2)
            arrays[first] = -arrays[first]
            np.savez(ctx.dir / "other.npz", **arrays)
            shutil.copy2(ctx.dir / "other.npz", copy)
        elif how == "module-payload":
            module.write_text(module.read_text() + "\n" + ctx.payload())
        elif how == "module-first-line":
            text = module.read_text().split("\n", 1)
            module.write_text("# Generated\n" + ctx.payload() + text[1])
        elif how == "module-carriage-return":  # a CR ends the comment line for Python
            text = module.read_text().split("\n", 1)
            module.write_text("# Generated\r" + ctx.payload().strip() + "\n" + text[1])
        elif how == "model-fifo":
            copy.unlink()
            _mkfifo(copy)
        elif how == "model-link-zero":
            copy.unlink()
            copy.symlink_to("/dev/zero")
    return setup


def cache_cases(root: bool) -> list[Case]:
    ok = {"expect": "either", "check": _same_games("run")}
    cases = []
    for how in ("payload", "payload-end", "empty", "half", "garbage", "fifo", "folder",
                "link-payload", "link-same", "link-zero", "hardlink-payload", "world-writable"):
        cases.append(Case("cache", f"greedy's wrapper module: {how}", SIM,
                          forge_module("greedy", how), timeout=150, **ok))
    for how in ("payload", "fifo", "link-payload"):  # the engine compiles again: slow
        cases.append(Case("cache", f"engine module: {how}", SIM, forge_module("engine", how),
                          timeout=240, **ok))
    cases.append(Case("cache", "engine module of another owner, with a payload", SIM,
                      forge_module("engine", "other-owner"), root_only=True, **ok))
    for kind in ("nbi", "nbc"):
        for how in ("truncate", "empty", "garbage", "fifo", "folder", "link-zero"):
            cases.append(Case("cache", f"greedy's numba {kind}: {how}", SIM,
                              forge_numba("greedy", "chooser", kind, how), **ok))
    for how in ("pickle-other-owner", "pickle-world-writable-folder", "pickle-other-folder",
                "pickle-linked-folder"):
        cases.append(Case("cache", f"engine's numba index: {how}", SIM,
                          forge_numba("engine", "play_batch", "nbi", how),
                          root_only=how != "pickle-world-writable-folder", **ok))
    cases.append(Case("cache", "engine's numba index: a forged pickle in a cache of one's own "
                      "(a copied cache)", SIM,
                      forge_numba("engine", "play_batch", "nbi", "pickle-own"), **ok))
    for how in ("fifo", "link-victim", "folder", "link-fifo"):
        cases.append(Case("cache", f"greedy's compile lock: {how}", SIM,
                          forge_lock("greedy", how), timeout=150, **ok))
    for how in ("lock-fifo", "lock-link-fifo", "lock-zero", "log-fifo", "log-link-victim",
                "log-folder", "done-fifo"):
        cases.append(Case("cache", f"background compile: {how}", SIM, forge_precompile(how),
                          **ok))
    for how in ("file", "devnull", "fifo", "relative", "newline", "non-utf8", "too-long",
                "proc", "empty-env", "world-writable"):
        cases.append(Case("cache", f"SNIFF_CACHE_DIR: {how}", SIM, cache_at(how), **ok))
    for how in ("other-owner", "kernels-other-owner", "kernels-link-other"):
        cases.append(Case("cache", f"SNIFF_CACHE_DIR: {how}", SIM, cache_at(how),
                          root_only=True, **ok))
    cases.append(Case("cache", "a cache the user cannot write (root's, used by nobody)",
                      [*SIM[:-3], "-o", "out", "-q"], cache_at("nobody-unwritable"),
                      root_only=True, user=NOBODY, timeout=240, expect="either",
                      check=_same_games("run")))
    for how in ("tmp-squatted", "tmp-world-writable"):
        cases.append(Case("cache", f"the temporary fallback: {how}", SIM, cache_at(how),
                          root_only=True, user=NOBODY, timeout=240, expect="either",
                          check=_same_games("run")))
    learned = ["simulate", "--players", "2", "--strategies", "learned:model=model.npz,greedy",
               "--games", "100", "--seed", "3", "-o", "out", "-q"]
    for how in ("model-swapped", "module-payload", "module-first-line",
                "module-carriage-return", "model-fifo", "model-link-zero"):
        cases.append(Case("cache", f"learned's cached model: {how}", learned,
                          learned_forged(how), expect="either", check=_same_games("runl")))
    return [c for c in cases if root or not c.root_only]
