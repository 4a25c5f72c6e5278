from cudalint.cli import main

raise SystemExit(main())
