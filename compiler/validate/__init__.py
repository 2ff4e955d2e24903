"""Stage 1, validate: find the catalog's files, read them defensively, check them, collect every problem.

Nothing here raises on bad data: every problem becomes a `Diagnostic` (file, line, column, JSON path) in a
`ValidationResult`, and reporters print it. The public entry points:
- `run.validate_paths` / `run.validate_catalog`: the whole check (`capidx validate`, and the build's first step);
- `discover`: which files are read (`configured`: a path capidx.yaml names that is not there, at its key);
  `load` + `positions` (YAML's in `capidx.schema.yamldata`, shared with the
  server): reading a JSON/YAML file with a map of where each value sits; `schemas` (+ `schemarefs`, local
  `$ref`s only; `fastschema`, the fast yes/no): JSON Schema;
  `build_needs`: what the build needs of a document whatever the schema; `lint`, `across` (one capability
  across agents), `textrules`, `instructions`, `links`, `regexrisk`: rules a schema cannot express;
- `reporters`: text, JSON and GitHub renderings of a result;
- `manifests`: is a file a capidx build manifest (before `--out` replaces a build, and in `capidx report`).
"""
