"""jsonschema's keyword functions with the name `re` read as a matcher with a time limit.

jsonschema matches a schema's regexes with `re.search`: in `pattern` and `patternProperties`, and where
`additionalProperties` and `unevaluatedProperties` work out which keys the patterns name. One `re.search` cannot be
interrupted, and a pattern that backtracks polynomially passes `regexrisk` (adjacent quantifiers, which it does not
judge): `^\\d*\\d*\\d*\\d*\\d*\\d*\\d*x$` took 20 s on 60 digits and would outlive any CI job on 3,000, whatever the
deadline of `schemacost` said. `with_search` gives one of jsonschema's own keyword functions, unchanged, in which `re`
names an object whose only function is the `search` given (schemacost's: the `regex` package with a timeout): the
same rules and the same errors as jsonschema's, in every draft, with no copy of its code to keep in step. The
functions it calls that reach `re` are given the same `re`; the others, and every function that never names `re`, are
used as they are.

Only `search` is given: should a later jsonschema call another function of `re` there, checking fails with an
AttributeError (a schema that "cannot be applied") instead of matching without a limit, and
tests/test_security_schema_patterns.py finds the keyword.
"""

from __future__ import annotations

import re
import types
from typing import Any

from capidx.schema.wording import Search


def with_search(function: Any, search: Search) -> Any:
    """`function` (a jsonschema keyword function), with `re.search` in it and in what it calls being `search`."""
    return _rebound(function, types.SimpleNamespace(search=search), {})


def reaches_re(function: Any) -> bool:
    """Whether `function`, or a function of jsonschema it calls, names the module `re`."""
    return _reaches(function, set())


def _rebound(function: Any, stand_in: Any, made: dict[Any, Any]) -> Any:
    if function in made:
        return made[function]
    if not reaches_re(function):
        return function
    namespace = dict(function.__globals__)
    copy = types.FunctionType(
        function.__code__, namespace, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    made[function] = copy  # before the helpers: a helper calling itself gets the copy
    if namespace.get("re") is re:
        namespace["re"] = stand_in
    for name in _names(function.__code__):
        if _is_jsonschema_function(namespace.get(name)):
            namespace[name] = _rebound(namespace[name], stand_in, made)
    return copy


def _reaches(function: Any, seen: set[Any]) -> bool:
    if function in seen:
        return False
    seen.add(function)
    names = _names(function.__code__)
    if "re" in names and function.__globals__.get("re") is re:
        return True
    return any(
        _reaches(function.__globals__[name], seen)
        for name in names
        if _is_jsonschema_function(function.__globals__.get(name))
    )


def _names(code: types.CodeType) -> set[str]:
    """The global names `code` reads, its comprehensions' and nested functions' included."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


def _is_jsonschema_function(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and value.__module__.partition(".")[0] == "jsonschema"
