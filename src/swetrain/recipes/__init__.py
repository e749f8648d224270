"""swetrain.recipes: end-to-end recipes for one model (its build and its demo runs).

A recipe may import any layer (train, eval, agent, tasks, ...); no core layer imports a recipe when
it is imported (tests/test_layers.py). Core code reaches a recipe only by an import string resolved on
use, e.g. the named checkpoints of :data:`swetrain.policy.spec.NAMED`.
"""
