"""swetrain.label"""
