"""swetrain.algos"""
