from promptlint.cli import main

raise SystemExit(main())
