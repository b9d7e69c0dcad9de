from qdqreport.cli import main

raise SystemExit(main())
