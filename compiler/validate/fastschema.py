"""A fast yes/no answer to "is this document valid?" for capidx's own schemas, from fastjsonschema.

jsonschema walks a document through generic machinery (a validator object per subschema): about a
millisecond per capability record, the largest cost of validating a large catalog. Almost every document
is valid, and a valid document has no errors to describe, so capidx's own schemas (the bundled
capability, aliases, config and manifest schemas, and the build contract derived from the capability
schema) are also compiled by fastjsonschema (Python code, ten or more times faster) to answer only that
question. True means "valid" for certain; anything else is answered by jsonschema, which also describes
the errors. A user's schema (--schema) gets no fast check: fastjsonschema differs from jsonschema in
corners, and only capidx's own schemas are tested to get the same verdicts from both
(tests/test_validate_fastschema.py). Formats are decided by `formats`, by jsonschema's rules without
importing jsonschema; a schema naming a format `formats` does not know gets no fast check.

Compiling a schema (generating its code, then compiling that to bytecode) takes ~50-100 ms, more than
the rest of validating a small catalog, so the compiled code is kept in capidx's cache folder for this
user (`compiler/usercache.py`: `$XDG_CACHE_HOME/capidx`, else `~/.cache/capidx`), keyed by the schema's
sha256, fastjsonschema's version and Python's bytecode version. An entry carries its key and the sha256
of its payload: a corrupt, truncated or foreign file is ignored and rewritten. Entries are written
atomically (a temporary file, then a rename), and a cache that cannot be read or written only means
compiling again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import tempfile
from collections.abc import Callable, Mapping
from functools import partial
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any

from capidx.compiler.usercache import cache_dir, owned, private_cache_dir
from capidx.compiler.validate import formats as format_rules

Check = Callable[[Any], bool]

_HEADER = b"capidx-fastschema 1\n"
_MAX_ENTRY_BYTES = 16 << 20  # far above any schema's compiled code (the capability schema's: ~0.1 MiB)


def compile_check(schema: Mapping[str, Any]) -> Check | None:
    """A function telling whether an instance is valid under `schema` (one of capidx's own), or None when
    fastjsonschema cannot compile it or it names a format `formats` cannot decide."""
    formats = sorted(_formats(schema))
    if not format_rules.KNOWN.issuperset(formats):
        return None
    compiled = _compiled(schema, formats)
    if compiled is None:
        return None
    import fastjsonschema

    name, code = compiled
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # the code fastjsonschema generated for this schema (from the cache, or just now)
    validate = namespace[name]
    if formats:
        validate = partial(validate, custom_formats={name: partial(_conforms, name) for name in formats})

    def check(instance: Any) -> bool:
        try:
            validate(instance)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return check


def _conforms(name: str, value: Any) -> bool:
    return format_rules.conforms(value, name)


def _formats(schema: Any) -> set[str]:
    """Every `format` named anywhere in `schema` (keywords and property names alike: a superset is harmless)."""
    if isinstance(schema, list):
        return set().union(*map(_formats, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = {schema["format"]} if isinstance(schema.get("format"), str) else set()
    return found.union(*map(_formats, schema.values())) if schema else found


def _compiled(schema: Mapping[str, Any], formats: list[str]) -> tuple[str, Any] | None:
    """(name of the validating function, its module's code object), from the cache or compiled now."""
    import fastjsonschema

    text = json.dumps(schema, sort_keys=True, ensure_ascii=False)
    key = hashlib.sha256(
        "\0".join([text, fastjsonschema.VERSION, MAGIC_NUMBER.hex(), *formats]).encode("utf-8")
    ).hexdigest()
    path = cache_dir() / f"fastschema-{key}.bin"
    cached = _read_entry(path, key)
    if cached is not None:
        return cached
    from fastjsonschema.ref_resolver import RefResolver

    try:
        # Copies (fastjsonschema rewrites the `$ref`s of the schema it is given); use_default=False, or the
        # code writes `default` values into documents; `_NO_FETCHING`: no `$ref` is ever fetched.
        source = fastjsonschema.compile_to_code(
            json.loads(text), handlers=_NO_FETCHING, formats=dict.fromkeys(formats, _never), use_default=False
        )
        # The top function's name, as fastjsonschema.compile finds it (it depends on the schema's `$id`).
        name = RefResolver.from_schema(json.loads(text), handlers=_NO_FETCHING, store={}).get_scope_name()
        compiled = name, compile(source, f"<fastjsonschema {key[:12]}>", "exec")
    except Exception:  # a bad `$ref` or regex, deep nesting: no fast check, and jsonschema reports the problem
        return None
    _write_entry(path, key, compiled)
    return compiled


def _never(value: Any) -> bool:
    """A format function stands in while generating code (only its name matters then); never called."""
    raise AssertionError("format functions are given when checking")


def _read_entry(path: Path, key: str) -> tuple[str, Any] | None:
    """A cache entry, only if it is whole, for this key, and ours; None otherwise (then: compile again)."""
    try:
        with open(path, "rb") as handle:
            if not owned(handle.fileno()):  # written by someone else: never executed
                return None
            data = handle.read(_MAX_ENTRY_BYTES + 1)
    except OSError:  # no entry, unreadable
        return None
    head = _HEADER + key.encode() + b"\n"
    if not data.startswith(head) or len(data) > _MAX_ENTRY_BYTES:
        return None
    digest, payload = data[len(head) : len(head) + 64], data[len(head) + 65 :]
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    try:
        name, code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return (name, code) if isinstance(name, str) and type(code).__name__ == "code" else None


def _write_entry(path: Path, key: str, compiled: tuple[str, Any]) -> None:
    """Store an entry atomically: a reader sees no entry or a whole one. Failure is silent (no cache)."""
    payload = marshal.dumps(compiled)
    data = _HEADER + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    if private_cache_dir() != path.parent:  # no cache folder of this user's alone: none is written
        return
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".fastschema-", suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


class _Refusing(dict):  # type: ignore[type-arg]
    """fastjsonschema's `handlers`: one for every URI scheme, refusing to fetch."""

    def __contains__(self, scheme: object) -> bool:
        return True

    def __missing__(self, scheme: str) -> Callable[[str], Any]:
        return _refuse


def _refuse(uri: str) -> Any:
    raise ValueError(f"not fetched: {uri} (capidx never fetches schemas)")


_NO_FETCHING = _Refusing()
