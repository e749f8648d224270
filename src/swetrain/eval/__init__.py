"""swetrain.eval"""
