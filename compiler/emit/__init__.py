"""Stage 4, emit: measure, budget and write the build directory — `capidx build` end to end.

Not named `build`: a folder of that name is ignored by common .gitignore templates and packaging tools.

- `pipeline.run_build`: validate → catalog → derive → render → measure → budget → write;
- `tokens`: exact token counts with tiktoken, offline; `budgets` and `table`: budgets and the printed table;
- `manifest`: `manifest.json`; `digest`: the inputs' digest that makes a no-op rebuild free; `packs`: which
  tool answers share one file;
- `outdir` and `write`: which folder may be replaced, and the atomic write of the build directory;
  `writefail`: the one line a write that failed (a full disk) ends the build with.
"""
