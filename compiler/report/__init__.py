"""`capidx report`: what a build costs in a context window, and what a change does to that cost.

- `model`: the `Report` (built from one or two manifests); `manifest_reader`: reading a build's manifest;
- `formats`: text, Markdown, JSON, GitHub annotations and HTML renderings (`json_form`, `html`).
"""
