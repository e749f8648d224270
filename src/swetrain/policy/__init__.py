"""swetrain.policy"""
