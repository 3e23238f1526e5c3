"""``sniff serve`` from the command line: one line and exit 2 without the ``serve`` extra;
with it, the address printed, pages served, and Ctrl-C a clean stop (exit 130)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

BLOCKED = """
import sys
sys.modules['uvicorn'] = None  # as if the serve extra were not installed
from sim.cli.main import main
main(['serve'], prog_name='sniff')
"""


def test_without_the_extra_one_line_and_exit_2():
    done = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "sniff: error: sniff serve needs starlette and uvicorn: pip install 'sniff[serve]'"]


def test_serves_the_page_and_stops_on_ctrl_c():
    pytest.importorskip("uvicorn")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "sim.cli", "serve", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = process.stdout.readline()
        assert line.strip() == f"sniff serve: open http://127.0.0.1:{port}/ (Ctrl-C stops)"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                    assert b"<svg id=\"board\"" in page.read()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.2)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err  # README: every command stopped by Ctrl-C
    assert "sniff serve: stopped" in out and err.strip() == "sniff: interrupted"


def test_a_port_in_use_is_one_line_and_exit_2():
    pytest.importorskip("uvicorn")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "sim.cli", "serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"sniff: error: cannot listen on 127.0.0.1 port {port}: Address already in use"]
