"""Package data of the tiny recipe: ``demos.jsonl`` (the shipped scripted repair demonstrations) and
``tiny-sft/`` (the shipped warm start)."""
