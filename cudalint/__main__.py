from cudalint.frontend.cli import main

raise SystemExit(main())
