"""The ``sniff serve`` command line (``sim.cli.main`` adds it to the ``sniff`` group).

Thin: it checks that the ``serve`` extra is installed (one line and exit 2 if not, as
``sniff tune`` does for ``cma``), prints the address and runs ``sim.serve.app`` under uvicorn,
which stops cleanly on Ctrl-C.
"""

from __future__ import annotations

import click

from sim.errors import SniffError

INSTALL_HINT = "sniff serve needs starlette and uvicorn: pip install 'sniff[serve]'"


def import_server():
    """uvicorn and the app factory, or a one-line error that says how to install them."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        raise SniffError(INSTALL_HINT) from None
    from sim.serve.app import create_app

    return uvicorn, create_app


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0 opens it to the network: nothing is "
                   "password-protected).")
@click.option("--port", default=8737, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
def serve(host: str, port: int) -> None:
    """A table in the browser: play against built-in strategies, with hints.

    Open the printed address; each tab keeps its own game. Ctrl-C stops the server.
    """
    uvicorn, create_app = import_server()
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"sniff serve: open http://{shown}:{port}/ (Ctrl-C stops)")
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")
    click.echo("sniff serve: stopped")
