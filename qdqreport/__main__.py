from qdqreport.cli import run

raise SystemExit(run())
