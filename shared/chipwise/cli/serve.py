"""``chipwise serve``: the intake API on http://127.0.0.1:8000, through the very resolver Lambda runs (the HTTP
adapter is :mod:`chipwise.cli._local_http`, loaded when the command runs)."""

from __future__ import annotations

import errno
import time
from typing import Any

import typer

from chipwise.cli.common import err
from chipwise.errors import ConfigError


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (keep 127.0.0.1 unless you mean it)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
) -> None:
    """Serve the intake form and API locally (the same handler as the Lambda function)."""
    from chipwise.cli._local_http import address, make_server
    from chipwise.pipeline._store import prepare_store

    prepare_store()
    try:
        server = make_server(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use: stop what listens there or pass --port"
            ) from exc
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    bound_host, bound_port = address(server)
    err.print(f"Chipwise intake on [bold]http://{bound_host}:{bound_port}/intake[/] (Ctrl-C to stop)")
    started = time.perf_counter()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        err.print(f"stopped after {time.perf_counter() - started:.0f}s")


def __getattr__(name: str) -> Any:
    """The adapter's names (``make_server``, ``address``, ``to_event``...) from here too, loaded on first use."""
    from chipwise.cli import _local_http

    try:
        return getattr(_local_http, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
