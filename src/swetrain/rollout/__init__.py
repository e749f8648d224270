"""swetrain.rollout"""
