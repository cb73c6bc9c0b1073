"""The session door (`mcpsqueeze serve`): the long-running proxy behind the shell shim, Just-Bash and Code
Mode, and the session HTTP API that a `Client` also serves to its Code Mode files."""

from ._session_api import Backends, Listen, NotFound, build_app, run_serve, too_large_body

__all__ = ["Backends", "Listen", "NotFound", "build_app", "run_serve", "too_large_body"]
