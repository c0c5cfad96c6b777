"""The `wherefrom` subcommands, one module each (argument parsing and calling); `main` wires
them, `client` is the one client of the running server."""
