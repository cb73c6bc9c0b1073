"""``python -m scripts.bench._child MODULE:FUNCTION``: run a function of this package in a process of its
own, the arguments read as JSON from stdin and the answer printed as JSON. How a benchmark measures
another source tree in process: the tree comes first on that process's PYTHONPATH (``Tree.call``)."""

from __future__ import annotations

import importlib
import json
import sys

module, function = sys.argv[1].split(":")
target = getattr(importlib.import_module(f"scripts.bench.{module}"), function)
print(json.dumps(target(**json.loads(sys.stdin.read()))))
