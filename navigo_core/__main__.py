from navigo_core.cli import main

raise SystemExit(main())
