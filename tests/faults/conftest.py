"""The faults suite: resources under hostile sizes and clients. Runs alone: `pytest tests/faults`. Helpers: `big_backend.py` (huge one-letter results, streamed), `treemem.py`
(a process tree's resident memory from /proc)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
