"""The `%copilot` subcommands, in parts the magics class composes (`notebook/magics.py`).

`context.py` holds what they share (the notebook's `Copilot`, the shell, the options);
`turns.py` shows a turn (chat widget or text); the other modules each answer a group of
subcommands (`handlers()`: word -> handler).
"""
