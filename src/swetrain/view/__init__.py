"""``swetrain view``: a run viewer (one self-contained HTML file, or a loopback server for big runs).

* :mod:`swetrain.view.load`: finds what a run directory holds (trajectory stores, metrics, eval
  records, isolation records, plots) and reads it robustly: a bad part or file is a note, not a crash;
* :mod:`swetrain.view.tokens`: the run's tokenizer (when one is found) and per-id token text;
* :mod:`swetrain.view.advantages`: the advantages a training run's trainer computed, recomputed
  from its stored rows and config;
* :mod:`swetrain.view.html`: the page (inline CSS and JS, no network);
* :mod:`swetrain.view.server`: ``--serve``, pages through the Parquet parts on 127.0.0.1;
* :mod:`swetrain.view.cli`: the command.

This package sits above every layer (like ``recipes``): it reads what they write and may import
any of them; no layer imports it.
"""
