"""swetrain.env"""
