"""swetrain.curriculum"""
