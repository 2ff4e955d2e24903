"""What `capidx build` reads under a configuration, so that `capidx inject` never appends its block to it.

The files the build reads, not the folders it reads from: the catalog folder or the templates folder may be
the project's own (`paths.agents: .`), where a rule refusing every file inside would refuse every memory file.
From the catalog folder the build reads its capability documents (`*/capabilities/current.{json,yaml,yml}`,
found as validate finds them) and the alias table; from the templates folder its templates and what they
include (`render.environment.folder_reads`). Named by the configuration: the `capidx.yaml` in force, the alias
table (any name: `paths.aliases: names.md`), the schema and the schema files it refers to. A file read through
a symbolic link is refused by its target too (`target._refuse_inputs` resolves both sides).

Most of these are refused by their names as well (`.json`, `.yaml`, `.j2`: `target._check_name`); listed here,
they are refused under any name (a link, a hard link, an alias table called `names.md`) and with a message that
says what they are.
"""

from __future__ import annotations

from capidx.compiler.config import Config
from capidx.compiler.files import FolderUnreadable
from capidx.compiler.inject.target import Input
from capidx.schema.pathkind import PathKind, folder_kind

_TEMPLATES_UNKNOWN = (
    "which capidx build may read whole: which of its files the templates read cannot be told (a name computed at "
    "render time, a template that cannot be read or parsed, or more than 10,000 names to follow); not a memory file"
)


def build_inputs(config: Config) -> tuple[Input, ...]:
    """Every file `capidx build` reads under `config` (a folder when which of its files cannot be told)."""
    from capidx.compiler.validate.discover import catalog_documents

    found = [Input("the capidx.yaml in force", path) for path in (config.config_file,) if path is not None]
    if config.aliases is not None:
        found.append(Input("the alias table", config.aliases))
    if config.schema is not None:
        from capidx.compiler.validate.schemarefs import referenced_files

        found.append(Input("the schema", config.schema))
        found += [Input("a schema file the schema refers to", path) for path in referenced_files(config.schema)]
    kind = folder_kind(config.agents)
    if kind is PathKind.UNLISTED:  # its files can be written by name, but which are documents cannot be told
        raise FolderUnreadable(str(config.agents), kind)  # as for such a folder inside it (files.walk)
    if kind is PathKind.FOLDER:  # one this user may not look into holds no file it could write
        found += [Input("a capability document", path) for path in catalog_documents(config.agents)]
    if config.templates is not None:
        from capidx.compiler.render.environment import folder_reads

        reads = folder_reads(config.templates)
        if reads is None:
            found.append(Input("the templates folder", config.templates, _TEMPLATES_UNKNOWN))
        else:
            found += [Input("a template or a file a template includes", path) for path in reads]
    return tuple(found)
