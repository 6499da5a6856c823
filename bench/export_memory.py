"""Peak memory of exportCsv on wide rows: the export streams, so RSS stays flat as rows grow.

.venv/bin/python bench/export_memory.py [--rows 5000] [--cell-kb 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.tools import make_ctx  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--cell-kb", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = root / "wide.sqlite"
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)")
            conn.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                "INSERT INTO docs SELECT i, printf('%0*d', ?, i) FROM n",
                (args.rows, args.cell_kb * 1000),
            )
        conn.close()
        ctx = make_ctx(db, root)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        from agent.tools.registry import run_tool

        status, result = run_tool(
            ctx, "exportCsv", {"query": "SELECT * FROM docs", "path": "docs.csv"}
        )
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    figures = {
        "rows": args.rows,
        "cell_kb": args.cell_kb,
        "status": status,
        "written_mb": round(result.get("bytes", 0) / 1e6, 1),
        "rss_before_mb": round(before / 1024, 1),
        "rss_peak_mb": round(peak / 1024, 1),
        "seconds": round(seconds, 2),
    }
    print(json.dumps(figures) if args.json else "\n".join(f"{k}: {v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
