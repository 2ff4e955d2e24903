"""Bundled JSON Schemas (package data)."""
