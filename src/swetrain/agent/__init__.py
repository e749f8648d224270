"""swetrain.agent"""
