"""A warning for Markdown link or image syntax in catalog text (`capidx.compiler.markup` says why).

The build makes such syntax inert (`![x](…)` is shown as `![x] (…)`), so the text still reads, but the
author probably meant a link: the warning says where, and what to write instead. An error with `--strict`.
"""

from __future__ import annotations

from capidx.compiler.diagnostics import Diagnostic
from capidx.compiler.markup import URL_KEYS, link_syntax
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.textrules import quote, strings

_HINT = "write it as plain text; put an address in `sources`, which capidx links itself"


def check_document(source: SourceFile) -> list[Diagnostic]:
    """One warning per string (value or key) that holds Markdown link or image syntax; addresses excepted."""
    if "]" not in source.text and "<" not in source.text and "\\u" not in source.text:
        return []  # (a `\\u` escape could spell a bracket the text does not show)
    problems = []
    for parts, text, is_key in strings(source.data, ()):
        if not is_key and parts and parts[-1] in URL_KEYS:
            continue
        if (found := link_syntax(text)) is not None:
            message = f"Markdown link or image syntax or HTML ({quote(found)}); the build shows it as text"
            problems.append(source.diagnostic(parts, "warning", message, _HINT, "links", key=is_key))
    return problems
