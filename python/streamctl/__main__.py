from streamctl.cli import main

raise SystemExit(main())
