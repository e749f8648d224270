"""swetrain.train"""
