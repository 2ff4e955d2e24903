"""`capidx report`: what a build costs in a context window, and what a change does to that cost.

- `model`: the `Report` (built from one or two manifests); `manifest_reader`: reading a build's manifest;
- `formats`: text, Markdown, JSON and GitHub renderings (`json_form` the JSON form); `html`: the HTML page;
- `datadiff`: with `--against`, what changed in the records (pure); `artifact_reader`: reading the documents it
  compares, as the manifest lists them;
- `run.run_report`: the command end to end (load, compute, render, write).
"""
