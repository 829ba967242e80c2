"""One module per ``kcspec`` subcommand; each exposes a click command named ``command``."""
