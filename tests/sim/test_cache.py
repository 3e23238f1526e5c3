"""A cache folder from someone else is a folder from someone else (#63): the compile cache
holds code sniff imports (its generated modules) and numba loads (its pickled compiled
files), so a folder or file there that is another user's, or that others may write, is one
line; a generated module is imported only as sniff wrote it; numba's files that are not
whole, or not regular files, are compiled again; and the background compile's lock, log
and markers never block a command or write through a link.

Found by the campaign of scripts/campaign (surface ``cache``)."""

from __future__ import annotations

import os
import pickle
import threading
import time
from pathlib import Path

import pytest

from sim import precompile
from sim.cache import UnsafeCache, cache_base, own_folder, seal, sealed
from sim.kernels import cachefiles, shared
from strategies import get
from tests.helpers import ROOT

ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                               reason="giving a file another owner needs root")
SOURCE = "VALUE = 41\n"


class _Payload:
    def __reduce__(self):
        return (exec, ("raise SystemExit('a forged pickle ran')",))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SNIFF_CACHE_DIR", str(folder))
    return folder


def _forge(path: Path, how: str, tmp_path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = f"import pathlib; pathlib.Path({str(tmp_path / 'ran')!r}).write_text('x')\n"
    if how == "other text":
        path.write_text(payload + SOURCE)
    elif how == "half":
        path.write_text(SOURCE[:5])
    elif how == "link":
        (tmp_path / "elsewhere.py").write_text(payload + SOURCE)
        path.symlink_to(tmp_path / "elsewhere.py")
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()


@pytest.mark.parametrize("how", ["other text", "half", "link", "fifo", "folder"])
def test_a_generated_module_is_imported_only_as_sniff_wrote_it(cache, tmp_path, how):
    """A forged ``sniff_engine_<hash>.py`` ran at the next command (its name is a hash of
    sniff's sources, known to anyone with the same install)."""
    path = cachefiles.cache_dir() / "sniff_trust_probe.py"
    _forge(path, how, tmp_path)
    compiled = path.parent / "__pycache__" / "sniff_trust_probe.run-3.py311.nbi"
    compiled.parent.mkdir(exist_ok=True)
    compiled.write_bytes(pickle.dumps(_Payload()))  # made for the forged text: removed
    written = cachefiles.write_generated("sniff_trust_probe", SOURCE)
    assert written == path and not path.is_symlink() and path.read_text() == SOURCE
    assert not compiled.exists()
    assert cachefiles.import_generated(path).VALUE == 41
    assert not (tmp_path / "ran").exists()


def _nbi(tmp_path: Path) -> bytes:
    return pickle.dumps("0.61.0") + pickle.dumps(((1.0, 2), {}))


@pytest.mark.parametrize("how", ["truncated", "garbage", "empty", "fifo", "folder", "link"])
def test_numba_files_that_are_not_whole_are_compiled_again(cache, tmp_path, how):
    """A truncated or garbled ``.nbi``/``.nbc`` ended in numba's traceback (EOFError,
    UnpicklingError), and a FIFO there blocked the command."""
    path = cachefiles.write_generated("sniff_trust_probe", SOURCE)
    folder = path.parent / "__pycache__"
    folder.mkdir(exist_ok=True)
    good = folder / "sniff_trust_probe.run-3.py311.nbi"
    good.write_bytes(_nbi(tmp_path))
    seal(good)  # a good index of one's own: removed only for its module's bad data file
    data = folder / "sniff_trust_probe.run-3.py311.1.nbc"
    if how == "truncated":
        data.write_bytes(pickle.dumps(list(range(100)))[:-20])
    elif how == "garbage":
        data.write_bytes(b"\x00garbage" * 50)
    elif how == "empty":
        data.write_bytes(b"")
    elif how == "fifo":
        os.mkfifo(data)
    elif how == "folder":
        data.mkdir()
    elif how == "link":
        data.symlink_to("/dev/zero")
    other = folder / "sniff_other_probe.run-3.py311.nbi"
    other.write_bytes(_nbi(tmp_path))
    cachefiles.check_compiled(path)
    assert not os.path.lexists(data) and not good.exists()  # the module's files, all
    assert other.exists()  # another module's are left alone


def test_whole_numba_files_of_ones_own_are_kept(cache, tmp_path):
    path = cachefiles.write_generated("sniff_trust_probe", SOURCE)
    folder = path.parent / "__pycache__"
    folder.mkdir(exist_ok=True)
    index = folder / "sniff_trust_probe.run-3.py311.nbi"
    index.write_bytes(_nbi(tmp_path))
    data = folder / "sniff_trust_probe.run-3.py311.1.nbc"
    data.write_bytes(pickle.dumps([1, 2]))
    seal(index)
    seal(data)
    cachefiles.check_compiled(path)
    assert index.exists() and data.exists()


COMPILED_SOURCE = """from numba import njit


@njit(cache=True)
def run(x):
    return x + 1
"""
# A fresh process imports the generated module and calls it: it prints the result and how
# many of the function's signatures numba loaded from the cache.
CALL = """import sys
from sim.kernels import cachefiles
module = cachefiles.import_generated(cachefiles.write_generated("sniff_trust_sealed", {source!r}))
print(module.run(1), module.run.stats.cache_hits.get(module.run.signatures[0], 0))
"""


def _call_in_a_fresh_process() -> tuple[int, int]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-P", "-c", CALL.format(source=COMPILED_SOURCE)],
                          capture_output=True, text=True, env=os.environ.copy(), check=True)
    result, hits = done.stdout.split()
    return int(result), int(hits)


def test_numba_files_are_loaded_only_under_this_accounts_seal(cache, tmp_path):
    """#63: a copy of someone else's cache made one's own (``cp -r``, a restored CI cache)
    passed every check of owner and shape, and numba unpickled its forged index: code ran.
    Each file numba writes is now sealed under a key outside the cache; a file sealed under
    another key (or not at all) is compiled again, never loaded."""
    assert _call_in_a_fresh_process() == (2, 0)  # compiled, and sealed as written
    assert _call_in_a_fresh_process() == (2, 1)  # loaded: the seal is this account's
    folder = cachefiles.cache_dir() / "__pycache__"
    index = next(folder.glob("sniff_trust_sealed.run-*.nbi"))
    assert index.with_name(index.name + ".seal").exists()
    # someone else's cache: the same layout, its index a payload, sealed by their key
    import hashlib
    import hmac

    index.write_bytes(pickle.dumps(_Payload()) + pickle.dumps(((1.0, 2), {})))
    theirs = hmac.new(b"k" * 32, index.name.encode() + b"\0" + index.read_bytes(),
                      hashlib.sha256).hexdigest().encode()
    index.with_name(index.name + ".seal").write_bytes(theirs)
    assert _call_in_a_fresh_process() == (2, 0)  # compiled again; the payload never ran
    assert sealed(next(folder.glob("sniff_trust_sealed.run-*.nbi")))
    # and a file with no seal at all
    index = next(folder.glob("sniff_trust_sealed.run-*.nbi"))
    index.with_name(index.name + ".seal").unlink()
    assert _call_in_a_fresh_process() == (2, 0)


def test_the_sealing_key_lives_outside_the_cache_and_is_private(cache):
    from sim import cache as files

    files.seal_key()
    key = files.seal_key_path()
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    assert not key.resolve().is_relative_to(cache.resolve())


def test_a_cache_folder_others_may_write_is_refused(cache, tmp_path):
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.raises(UnsafeCache, match="may be written by every user"):
        cachefiles.cache_dir()
    cache.chmod(0o700)
    (cache / "kernels").mkdir(mode=0o777)
    (cache / "kernels").chmod(0o777)
    with pytest.raises(UnsafeCache, match=r"kernels: may be written by every user.*your own"):
        cachefiles.cache_dir()


def test_a_new_cache_folder_is_private_and_a_file_there_is_one_line(cache, tmp_path):
    assert cachefiles.cache_dir().stat().st_mode & 0o077 == 0
    assert cache.stat().st_mode & 0o077 == 0
    os.environ["SNIFF_CACHE_DIR"] = str(tmp_path / "file")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeCache, match="is not a folder"):
        cache_base()


@ROOT_ONLY
def test_a_cache_of_another_user_is_refused(cache, tmp_path):
    cachefiles.cache_dir()
    os.chown(cache, 65534, 65534)
    with pytest.raises(UnsafeCache, match=r"owned by another user \(uid 65534\)"):
        cachefiles.cache_dir()
    os.chown(cache, 0, 0)
    path = cachefiles.write_generated("sniff_trust_probe", SOURCE)
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeCache, match="owned by another user"):
        cachefiles.write_generated("sniff_trust_probe", SOURCE)
    os.chown(path, 0, 0)
    compiled = path.parent / "__pycache__" / "sniff_trust_probe.run-3.py311.nbi"
    compiled.parent.mkdir(exist_ok=True)
    compiled.write_bytes(pickle.dumps(_Payload()))
    os.chown(compiled, 65534, 65534)
    with pytest.raises(UnsafeCache, match="owned by another user"):
        cachefiles.import_generated(path)


def test_the_temporary_fallback_taken_by_someone_else_is_refused(tmp_path, monkeypatch):
    """With no writable home, the cache went to TMPDIR/sniff-cache-UID whoever made it: a
    user who made it first (world-writable /tmp) decided what code ran."""
    import tempfile

    monkeypatch.delenv("SNIFF_CACHE_DIR", raising=False)
    (tmp_path / "not-a-home").write_text("a file: no .cache below it")
    monkeypatch.setenv("HOME", str(tmp_path / "not-a-home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    squatted = tmp_path / f"sniff-cache-{os.getuid()}"
    squatted.mkdir()
    squatted.chmod(0o777)
    with pytest.raises(UnsafeCache, match="may be written by every user"):
        cache_base()
    squatted.chmod(0o700)
    assert cache_base() == squatted


def _blocks(call, fifo: Path) -> float:
    """How long ``call()`` took; a writer opens ``fifo`` after 2 s, so a call that waits on
    it returns only then."""
    def unblock():
        time.sleep(2)
        try:
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(descriptor)
        except OSError:
            pass
    helper = threading.Thread(target=unblock, daemon=True)
    helper.start()
    started = time.monotonic()
    call()
    return time.monotonic() - started


def test_a_precompile_lock_or_log_that_is_a_fifo_never_blocks(cache, tmp_path):
    """Every command read ``precompile.lock`` (a FIFO there hung it), and the background
    compile's log was opened to append through a link or a FIFO."""
    folder = cachefiles.cache_dir()
    lock = folder / shared.LOCK_NAME
    os.mkfifo(lock)
    assert _blocks(lambda: shared.lock_held(folder), lock) < 1
    assert _blocks(lambda: shared.held_by_another(folder), lock) < 1
    assert shared.odd_lock(folder) and lock.exists()
    log = folder / shared.LOG_NAME
    os.mkfifo(log)
    assert _blocks(lambda: shared.open_log(log).close(), log) < 1
    os.unlink(log)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    log.symlink_to(victim)
    with shared.open_log(log) as handle:
        handle.write(b"compile output\n")
    assert victim.read_text() == "precious\n"


def test_the_background_compile_writes_no_marker_through_a_link(cache, tmp_path, monkeypatch):
    folder = cachefiles.cache_dir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    monkeypatch.setattr(precompile, "compile_everything", lambda order: None)
    monkeypatch.setattr(shared, "done_marker", lambda: folder / "precompile-x.done")
    monkeypatch.setattr(precompile, "done_marker", lambda: folder / "precompile-x.done")
    (folder / "precompile-x.done").symlink_to(victim)
    assert precompile.compile_once() == 0
    assert victim.read_text() == "precious\n"
    (folder / f"{shared.LOCK_NAME}.{os.getpid()}").symlink_to(victim)  # the claim's name
    assert precompile.compile_once() == 0
    assert victim.read_text() == "precious\n"


def test_a_forged_copy_of_a_model_or_its_module_is_replaced(cache, tmp_path):
    """The copy of a ``learned:model=PATH`` file in the cache was trusted by name (another
    model's bytes there played other games). And the generated module is read as bytes
    now, without the newline translation that used to turn a CR into a line of its own: a
    CR in its first line (the comment naming the path, not compared), where Python ends a
    line, must not let what follows it run."""
    from strategies.learned.model_files import model_strategy

    models = ROOT / "strategies" / "learned" / "models"
    model = models / "learned-2p.npz"
    learned = get("learned")
    first = model_strategy(learned, str(model))
    folder = cache / "learned"
    copy = next(folder.glob("model_*.npz"))
    module = folder / f"{first.module}.py"
    text = module.read_text()
    copy.write_bytes((models / "learned-4p.npz").read_bytes())
    payload = f"import pathlib; pathlib.Path({str(tmp_path / 'ran')!r}).write_text('x')"
    module.write_text("# Generated\r" + payload + "\n" + text.split("\n", 1)[1])
    model_strategy(learned, str(model))
    assert copy.read_bytes() == model.read_bytes()
    assert module.read_text() == text and not (tmp_path / "ran").exists()


def test_own_folder_follows_a_link_the_user_made(tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    assert own_folder(tmp_path / "linked") == tmp_path / "linked"
