"""Stage 3, render: which artifacts a catalog produces (`plan`) and their text, through Jinja.

- `environment`: the sandboxed, strict Jinja environment (user templates override bundled ones by name);
- `views`: the small pure helpers templates call; `markdown`: filters that keep data inside Markdown;
- `plan`: the artifact plan — paths, URIs and text of every artifact, pure apart from Jinja;
- `overview`: instructions.md and memory.md, the overview fitted to a character budget (pure Python);
- `site` (+ `site_data`, `site_llms`, `site_page`): `site/` — the JSON API, llms.txt and the web page, from the
  same views as the Markdown.
"""
