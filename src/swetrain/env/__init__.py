"""swetrain.env: repository workspaces with exact reset and limits, the agent tools, the verifier.

Import from the submodules (``swetrain.env.workspace``, ``swetrain.env.tools``,
``swetrain.env.verifier``, ``swetrain.env.verdict``); nothing heavy is imported here.
"""
