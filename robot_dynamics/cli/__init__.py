"""The command line: ``robot-dynamics`` and its subcommands (main.py dispatches)."""
