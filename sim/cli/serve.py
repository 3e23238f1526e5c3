"""The ``sniff serve`` command line (``sim.cli.main`` adds it to the ``sniff`` group).

Thin: it checks that the ``serve`` extra is installed (one line and exit 2 if not, as
``sniff tune`` does for ``cma``), prints the address and runs ``sim.serve.app`` under uvicorn,
which shuts down cleanly on Ctrl-C (then exit 130, the status of every command stopped
by Ctrl-C).
"""

from __future__ import annotations

import socket

import click

from sim.errors import SniffError

__all__: list[str] = []  # nothing here is used outside sim.cli

INSTALL_HINT = "sniff serve needs starlette and uvicorn: pip install 'sniff[serve]'"


def import_server():
    """uvicorn and the app factory, or a one-line error that says how to install them."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise SniffError(INSTALL_HINT) from None
    from sim.serve.app import create_app
    from sim.serve.guard import Guard, allowed_hosts

    return uvicorn, lambda host, port: create_app(guard=Guard(allowed_hosts(host, port)))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0 opens it to the network: nothing is "
                   "password-protected).")
@click.option("--port", default=8737, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free port, printed).")
def serve(host: str, port: int) -> None:
    """A table in the browser: play against built-in strategies, with hints.

    Open the printed address; each tab keeps its own game. Ctrl-C stops the server.
    """
    uvicorn, create_app = import_server()
    # The socket is bound here, so a port in use is one line (exit 2), not uvicorn's log,
    # and --port 0 prints the port the system chose.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as error:
        sock.close()
        reason = getattr(error, "strerror", None) or error
        raise SniffError(f"cannot listen on {host} port {port}: {reason}") from None
    sock.listen(128)  # connectable from the moment the address is printed
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"sniff serve: open http://{shown}:{port}/ (Ctrl-C stops)")
    from sim.serve.app import DEFAULT_OPPONENT
    from sim.serve.game import warm_up

    warm_up(DEFAULT_OPPONENT)  # the first game's compile starts now, not at its request
    # No lifespan: the app has no start-up or shut-down work, and Starlette's lifespan task,
    # cancelled by Ctrl-C, logged a traceback on the way out.
    # The app answers only this host and port (a DNS-rebinding page names another host).
    server = uvicorn.Server(uvicorn.Config(create_app(host, port), log_level="warning",
                                           lifespan="off"))
    try:
        server.run(sockets=[sock])
        if server.should_exit:
            # Only a signal stops the server. uvicorn raises the captured Ctrl-C again once
            # it is down, but asyncio's runner, whose handler it restores, can swallow it
            # when the main task has just finished (seen under load): exit 130 regardless.
            raise KeyboardInterrupt
    finally:  # uvicorn has shut down cleanly; Ctrl-C then exits 130, as every command does
        click.echo("sniff serve: stopped")
