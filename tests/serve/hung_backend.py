"""A stdio MCP backend whose only tool never answers and which ignores SIGTERM (the signal tests use it).

argv[1] is a file it writes its pid to when a call arrives, so a test knows the call is in flight.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stdio_backend import serve

signal.signal(signal.SIGTERM, signal.SIG_IGN)
marker = sys.argv[1]


def on_call(message: dict[str, Any]) -> None:
    with open(marker, "w") as out:
        out.write(str(os.getpid()))


serve("hung", [{"name": "hang", "inputSchema": {"type": "object"}}], on_call)
while True:  # stdin closed: still hang, as a wedged server would
    signal.pause()
