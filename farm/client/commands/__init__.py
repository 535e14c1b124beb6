"""The `farm` subcommands that talk to a farm server (login, submit, status, runs, ...)."""
