from server.commands.main import main

raise SystemExit(main())
