"""`capidx report`: what a build costs in a context window, and what a change does to that cost.

- `model`: the `Report` (built from one or two manifests); `manifest_reader`: reading a build's manifest;
- `formats`: text, Markdown, JSON and GitHub renderings (`json_form` the JSON form); `html`: the HTML page;
- `run.run_report`: the command end to end (load, compute, render, write).
"""
