"""Bundled Jinja templates, one per artifact kind (package data)."""
