"""Vendor batch APIs: submit first attempts in bulk at the vendors' batch price.

``protocol`` holds the contract every vendor's batch module implements (plain
data plus one ``Protocol``); the runner, journal and cost live beside it.
"""
