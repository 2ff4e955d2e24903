"""Stage 2, derive: everything computed from the frozen `Catalog` before rendering (pure functions).

- `tool_documents`: the answers of the lookup / compare / list / sources tools;
- `enhance`: the enhanced index — `relations` (similar-to edges), canonical descriptions (by `semantics`),
  injection settings;
- `snippets`: the few lines per capability the server packs into budgeted suggestions;
- `match`: `index/match.json`, what the server needs to resolve names;
- `stats`: `stats.json`, counts and the measured size of every other artifact.
"""
