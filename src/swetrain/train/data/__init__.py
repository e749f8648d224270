"""Package data of swetrain.train: ``demos.jsonl``, the shipped scripted repair demonstrations."""
