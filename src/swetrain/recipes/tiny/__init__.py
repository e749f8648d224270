"""swetrain.recipes.tiny: the CPU base policies and the main job built on them.

* :mod:`.warmstart`: the SFT warm start (``swetrain warmstart``; presets ``tiny`` and ``smollm2``),
  with the shipped demonstrations and the shipped ``tiny-sft`` checkpoint in ``data/``;
* :mod:`.demo_pool`: extra train-only tasks to harvest demonstrations from;
* :mod:`.drills`: procedurally generated locate/edit skill drills;
* :mod:`.copy_pretrain`: copy pretraining (an induction head, trained shallow, then grown);
* :mod:`.copy_skill`: induction and edit-copy probes (``bench/copy_bench.py``);
* :mod:`.policy_spec`: the named checkpoints ``tiny-sft``, ``tiny-sft-build``, ``smollm2-sft``;
* :mod:`.quickstart`: the main job ``swetrain quickstart`` (evaluate -> FC-SWE RL -> evaluate).
"""
