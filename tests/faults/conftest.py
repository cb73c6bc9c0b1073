"""The faults suite: resources under hostile sizes and clients. Runs alone: `pytest tests/faults`. Helpers:
`http_doors.py` (the HTTP doors, spawned or here, and raw-socket requests), `treemem.py` (a process tree's
resident memory from /proc), `loop_lag.py` (how long a door's event loop was held); the backends are in
tests/fixtures (`big_backend.py`: huge one-letter results, streamed)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
