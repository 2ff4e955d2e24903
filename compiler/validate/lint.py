"""Rules a JSON Schema cannot express. Each finding is a `Diagnostic` with its own `code`.

Every rule reads the data defensively: the schema check reports wrong types and missing keys, so a rule
simply skips what it cannot read instead of failing on it.

Freshness never turns into an error on its own: without a configured hard limit (`staleness.error_days`
or `--max-age-days`) age only ever produces warnings, so a pre-commit hook cannot start failing on
unchanged data just because time passed.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from capidx.compiler.config import Config, Staleness
from capidx.compiler.derive.match import naming_words, wording_keys
from capidx.compiler.derive.semantics import description_stats, low_information
from capidx.compiler.diagnostics import Diagnostic, Severity
from capidx.compiler.validate import across, aliases, discover, instructions, links, textrules
from capidx.compiler.validate.load import SourceFile
from capidx.compiler.validate.regexrisk import MAX_PATTERN_CHARS, backtracking_risk
from capidx.compiler.validate.textrules import quote
from capidx.schema.text import normalize, plural, slugify
from capidx.schema.wording import CLOSE_MATCH_WORK, close_match

AGENT_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MAX_DATE_TIME = 40  # characters of an RFC 3339 date-time with a long fraction of a second
_REVERIFY = "re-check the source and update verifiedDate"


def check_document(source: SourceFile, config: Config, today: date) -> list[Diagnostic]:
    """All single-document rules for one capability document."""
    capabilities = list(textrules.items(source.data, "capabilities"))
    problems = _duplicate_names(source, capabilities) + textrules.check_document_text(source)
    problems += instructions.check_document(source) + links.check_document(source) + links.check_addresses(source)
    problems += links.check_placeholders(source)
    problems += _future_edit(source, today) + _no_capabilities(source)
    said = {problem.pointer for problem in problems}  # e.g. a blank name has no slug, a blank url no scheme
    problems += [problem for problem in textrules.check_blank(source) if problem.pointer not in said]
    for index, capability in capabilities:
        parts = ("capabilities", index)
        problems += _vague_description(source, parts, capability, config.min_description_entropy)
        problems += _deprecation_and_date(source, parts, capability)
        problems += aliases.check_own_aliases(source, parts, capability) + _repeated_sources(source, parts, capability)
        problems += _unavailable_labels(source, parts, capability) + _no_sources(source, parts, capability)
        problems += _use_when_patterns(source, parts, capability)
        of = textrules.cited_by(capability)
        for source_index, citation in textrules.items(capability, "sources"):
            source_parts = (*parts, "sources", source_index)
            problems += _excerpt_missing(source, source_parts, citation, of)
            problems += _freshness(source, source_parts, citation, config.staleness, today, of)
    return problems


def check_agent_directory(path: Path) -> list[Diagnostic]:
    """`agents/<id>/capabilities/current.json`: <id> becomes URIs and file names, so it must be a slug."""
    agent_id = discover.agent_folder(path)
    if agent_id is None:
        return []
    if AGENT_SLUG.match(agent_id) and len(agent_id) > textrules.SLUG_MAX:
        message = f"agent directory name of {len(agent_id)} characters (at most {textrules.SLUG_MAX})"
        hint = "it names the agent's files and URIs; shorten it"
        return [Diagnostic(str(path), None, None, "", "error", message, hint, "agent-dir-slug")]
    if AGENT_SLUG.match(agent_id):
        return []
    message = f"agent directory name {quote(agent_id)} is not a slug (lower-case letters, digits, single hyphens)"
    hint = f"rename the directory to {quote(slugify(agent_id))}" if slugify(agent_id) else None
    return [Diagnostic(str(path), None, None, "", "error", message, hint, "agent-dir-slug")]


def check_duplicate_agents(paths_by_agent: Iterable[tuple[str, Path]]) -> list[Diagnostic]:
    """Two documents for one agent (current.json beside current.yaml) would silently shadow each other."""
    first: dict[str, Path] = {}
    problems = []
    for agent_id, path in paths_by_agent:
        if agent_id in first:
            other = first[agent_id]
            hint = f"{other.name if other.parent == path.parent else other} is the other one; keep one"
            message = f"second capability document for agent {quote(agent_id)}"
            problems.append(Diagnostic(str(path), None, None, "", "error", message, hint, "duplicate-agent"))
        else:
            first[agent_id] = path
    return problems


# Agent × capability answers a build makes at most. Each agent is answered on every capability of the catalog,
# recorded or not (a lookup and a sources answer, a cell of every matrix), so their number is the product of the two
# counts, not the number of records: 80 agents each recording 20 capabilities of their own (1.3 MB of documents) made
# 128,000 of each answer, a 252 MB build, 58 s and 1.4 GB of memory; 300 agents of one capability each, 90,000 from
# 136 KB. Twice the largest catalog benchmarked (20 agents sharing 1,250 capabilities: 25,000).
MAX_ANSWERED_PAIRS = 50_000
# Agents named in lookup answers at most: each agent's answer on a capability lists every agent that has it
# (`availableFor`), so they are the agents times the records of available capabilities. 1,000 agents sharing one
# capability (400 KB of documents) made a lookup pack of 24 MB, four times 500 agents'. Five times the largest
# catalog benchmarked (20 agents, 20,000 records: at most 400,000).
MAX_LISTED_AGENTS = 2_000_000
_CATALOG_SIZE_HINT = (
    "every agent is answered on every capability, recorded or not: give one capability one name in every agent "
    "that has it, or split the catalog"
)
_LISTED_AGENTS_HINT = (
    "each agent's answer on a capability lists every agent that has it: split the catalog, or keep fewer agents in it"
)


def check_catalog_size(sources: Sequence[SourceFile], context: Sequence[SourceFile] = ()) -> list[Diagnostic]:
    """One error, at the first checked document, when the catalog's agents times its capabilities (by slug, as the
    build makes them) pass `MAX_ANSWERED_PAIRS`, or its agents times its records of available capabilities pass
    `MAX_LISTED_AGENTS`: the build's size grows with those products, so a pull request's small documents, each
    naming capabilities of its own or all sharing one, would make it grow with the square of theirs."""
    if not sources:
        return []
    agents: set[str] = set()
    slugs: set[str] = set()
    available: set[tuple[str, str]] = set()
    for source in (*sources, *context):
        agents.add(agent := discover.agent_id(source.path))
        for _, capability in textrules.items(source.data, "capabilities"):
            name = capability.get("name")
            if isinstance(name, str) and (slug := slugify(name)):
                slugs.add(slug)
                if capability.get("available") is True:
                    available.add((agent, slug))
    if (pairs := len(agents) * len(slugs)) > MAX_ANSWERED_PAIRS:
        message = (
            f"the catalog's {len(agents):,} agents and {len(slugs):,} capabilities make {pairs:,} answers "
            f"(one per agent and capability), more than the {MAX_ANSWERED_PAIRS:,} a build makes"
        )
        hint = _CATALOG_SIZE_HINT
    elif (listed := len(agents) * len(available)) > MAX_LISTED_AGENTS:
        message = (
            f"the catalog's {len(agents):,} agents and {len(available):,} records of available capabilities make "
            f"{listed:,} agents named in lookup answers, more than the {MAX_LISTED_AGENTS:,} a build makes"
        )
        hint = _LISTED_AGENTS_HINT
    else:
        return []
    first = min(sources, key=lambda source: str(source.path))
    return [Diagnostic(str(first.path), None, None, "", "error", message, hint, "catalog-size")]


def check_agent_names(sources: Sequence[SourceFile], context: Sequence[SourceFile] = ()) -> list[Diagnostic]:
    """Two agents with one display name (an agent folder copied, its `agent.name` left as it was), or an agent's
    alias (`agent.aliases`) that is another agent's name or alias: the matrices show two columns of that name, and
    the server answers the name with both. Said at each checked document whose name an earlier one has; `context`
    (the rest of the catalog, read when a pre-commit hook names only changed files) comes first, so that a copied
    folder named alone is still compared with the one it was copied from."""
    first: dict[str, tuple[Path, str]] = {}  # a name as compared -> the document that gave it first, and as what
    problems = []
    for number, source in enumerate((*context, *sources)):
        for path, name in _agent_names(source):
            key = normalize(name)
            if key not in first:
                first[key] = (source.path, "name" if len(path) == 2 else "alias")
                continue
            earlier, what = first[key]
            if number < len(context) or discover.agent_id(earlier) == discover.agent_id(source.path):
                continue  # (one agent's second document, current.yaml beside current.json, is duplicate-agent's error)
            hint = "give each agent its own name: tables show agents by it, and the server answers it with both"
            said = "agent name" if len(path) == 2 else "agent alias"
            message = f"{said} {quote(name)} is also the {what} of agent {quote(discover.agent_id(earlier))}"
            problems.append(source.diagnostic(path, "warning", message, hint, "agent-name"))
    return problems + _aliases_of_others(sources, context)


def _aliases_of_others(sources: Sequence[SourceFile], context: Sequence[SourceFile]) -> list[Diagnostic]:
    """An alias every word of which another agent's name or id has ('Claude', given to another agent than Claude
    Code): the server reads it as both agents, as it does a word two names share. One that is that agent's name or
    alias whole is said above."""
    named: dict[str, tuple[set[str], set[str]]] = {}  # agent id -> the words naming it, its names whole
    for source in (*context, *sources):
        agent_id = discover.agent_id(source.path)
        names = _agent_names(source)
        if agent_id in named or not names or names[0][0] != ("agent", "name"):
            continue
        named[agent_id] = (naming_words(agent_id, names[0][1]), {normalize(name) for _, name in names})
    problems = []
    for source in sources:
        own = discover.agent_id(source.path)
        for path, name in [(path, name) for path, name in _agent_names(source) if path[1] == "aliases"]:
            key = normalize(name)
            others = [
                agent_id
                for agent_id, (words, whole) in named.items()
                if agent_id != own and set(key.split()) <= words and key not in whole
            ]
            if others:
                whose, answered = ("its name or id", "both") if len(others) == 1 else ("their names or ids", "each")
                message = (
                    f"agent alias {quote(name)} also names agent{'s' if len(others) > 1 else ''}"
                    f" {', '.join(map(quote, others))} (every word of it is in {whose}): the server answers it with"
                    f" {answered}"
                )
                hint = "give the alias a word of this agent's alone, or leave it out: its name and id are read already"
                problems.append(source.diagnostic(path, "warning", message, hint, "agent-name"))
    return problems


def _agent_names(source: SourceFile) -> list[tuple[tuple[str | int, ...], str]]:
    """Where and what each name of the document's agent is: its `name`, then each alias (blank ones left out)."""
    agent = source.data.get("agent") if isinstance(source.data, dict) else None
    if not isinstance(agent, dict):
        return []
    aliases = agent.get("aliases") if isinstance(agent.get("aliases"), list) else []
    named = [(("agent", "name"), agent.get("name"))]
    named += [(("agent", "aliases", index), alias) for index, alias in enumerate(aliases)]
    return [(path, name) for path, name in named if isinstance(name, str) and normalize(name)]


def check_alias_targets(source: SourceFile, capability_names: Iterable[str]) -> list[Diagnostic]:
    """Every alias must lead to a capability some agent has (compared like the resolver does: normalized)."""
    table = source.data.get("aliases") if isinstance(source.data, dict) else None
    if not isinstance(table, dict):
        return []
    known = {normalize(name): name for name in capability_names}
    problems = []
    for phrase, target in table.items():
        if not isinstance(target, str) or not target.strip() or normalize(target) in known:
            continue
        sought = len(problems) < MAX_SPELLINGS_SOUGHT
        problems.append(
            source.diagnostic(
                ("aliases", phrase),
                "error",
                f"alias target {quote(target)} is not the name of any capability",
                _closest(target, known.values(), _NO_NAME_OR_REMOVE) if sought else _NO_NAME_OR_REMOVE,
                "alias-target",
            )
        )
    return problems


_Use = tuple[str, str, str, str]  # an agent's wording: (agent, wording, capability name, that name normalized)


def check_alias_wordings(source: SourceFile, documents: Sequence[SourceFile]) -> list[Diagnostic]:
    """An alias leads every agent to its target, ahead of the agents' own wordings (the server tries the alias table
    first): a phrase an agent's terminology uses for another capability would answer that agent with the wrong one.
    Wordings are read as the index keys them (`wording_keys`)."""
    table = source.data.get("aliases") if isinstance(source.data, dict) else None
    if not isinstance(table, dict):
        return []
    # Wording key -> its first use and the first use for another capability, each (agent, wording, capability name,
    # that name normalized): the first use whose capability is not an alias's target is one of those two. Every use of
    # the key was looked at for each phrase: 19,000 phrases written apart in spaces and hyphens (one key) and 1,000
    # records sharing the wording took 49 s, growing with the product.
    worded: dict[str, tuple[_Use, _Use | None]] = {}
    for document in documents:
        agent = discover.agent_id(document.path) or "an agent"
        for _, capability in textrules.items(document.data, "capabilities"):
            wording, name = capability.get("terminology"), capability.get("name")
            if isinstance(wording, str) and isinstance(name, str):
                use = (agent, wording, name, normalize(name))
                for key in wording_keys(wording):
                    first, other = worded.setdefault(key, (use, None))
                    if other is None and use[3] != first[3]:
                        worded[key] = (first, use)
    problems = []
    for phrase, target in table.items():
        if not isinstance(target, str):
            continue  # the schema's error
        first, other = worded.get(normalize(phrase), (None, None))
        clash = first if first is not None and first[3] != normalize(target) else other
        if clash is None:
            continue
        agent, wording, name, _ = clash
        used = f"{agent}'s wording {quote(wording)} uses it for {quote(name)}"
        message = f"alias {quote(phrase)} leads to {quote(target)}, but {used}"
        answered = f"asking {agent} for {quote(phrase)} answers {quote(target)}"
        hint = f"the alias wins, so {answered}: remove the alias or lead it to {quote(name)}"
        problems.append(source.diagnostic(("aliases", phrase), "warning", message, hint, "alias-wording"))
    return problems


def check_alias_text(source: SourceFile) -> list[Diagnostic]:
    """The alias table's phrases and targets are single-line text (`textrules`) that instructs no one."""
    return textrules.check_alias_text(source) + instructions.check_document(source) + links.check_document(source)


def check_successors(sources: Sequence[SourceFile], names: Iterable[str]) -> list[Diagnostic]:
    """A capability's `supersededBy` names its replacement, which the build's relationships point a model to:
    it should be one of the catalog's capability `names` (compared normalized, like alias targets)."""
    known = {normalize(name): name for name in names}
    problems = []
    for source in sources:
        for index, capability in textrules.items(source.data, "capabilities"):
            successor = capability.get("supersededBy")
            if not isinstance(successor, str) or not successor.strip() or normalize(successor) in known:
                continue
            message = f"supersededBy {quote(successor)} is not the name of any capability"
            hint = _closest(successor, known.values()) if len(problems) < MAX_SPELLINGS_SOUGHT else _NO_NAME
            problems.append(
                source.diagnostic(("capabilities", index, "supersededBy"), "warning", message, hint, "successor")
            )
    return problems


def capability_names(data: Any) -> Iterator[str]:
    for _, capability in textrules.items(data, "capabilities"):
        if isinstance(capability.get("name"), str):
            yield capability["name"]


def _duplicate_names(source: SourceFile, capabilities: list[tuple[int, dict[str, Any]]]) -> list[Diagnostic]:
    """Names differing only in case, spacing and punctuation would share one slug and one URI; only in singular and
    plural ('MCP Server', 'MCP Servers'), they would be two capabilities of one agent, each answering its part."""
    first: dict[str, tuple[int, str]] = {}
    problems = []
    for index, capability in capabilities:
        name = capability.get("name")
        key = normalize(name) if isinstance(name, str) else ""
        if not key:
            continue
        if (form := across.singular(key).replace(" ", "")) not in first:  # 'Sub-agents' is 'Subagents' spelled apart
            first[form] = (index, name)
            continue
        first_index, first_name = first[form]
        line = source.source_map.locate(("capabilities", first_index, "name"))
        where = f"first at $.capabilities[{first_index}].name" + (f", line {line[0]}" if line else "")
        code, first_key = "duplicate-capability", normalize(first_name)
        if key != first_key and key.replace(" ", "") == first_key.replace(" ", ""):
            message = f"duplicate capability name {quote(name)}: it differs only in spaces and hyphens from "
            message += quote(first_name)
            hint = f"{where}; write one name once"
        elif key != first_key:
            message = f"duplicate capability name {quote(name)}: it differs only in singular and plural from "
            message += quote(first_name)
            hint = f"{where}; {across.PLURAL_HINT}"
        elif across.symbols(name) != across.symbols(first_name):  # 'C# Support' after 'C++ Support': not one name
            message = f"{quote(name)} makes the same slug ({slugify(name)}) as {quote(first_name)}"
            hint, code = f"{where}; {across.RENAME}", "name-slug-collision"
        elif name != first_name:  # 'MCP SERVERS' after 'MCP Servers': the one it repeats, as written there
            differs = _how_it_differs(name, first_name)
            message = f"duplicate capability name {quote(name)}: it differs only in {differs} from {quote(first_name)}"
            hint = f"{where}; write one name once"
        else:
            message, hint = f"duplicate capability name {quote(name)}", f"{where}; write one name once"
        problems.append(source.diagnostic(("capabilities", index, "name"), "error", message, hint, code))
    return problems


def _how_it_differs(name: str, first: str) -> str:
    """What tells apart two spellings of one name ('MCP SERVERS', 'MCP Servers'): 'Cafe Mode' after 'Café Mode' was
    said to differ "only in case, spacing or punctuation", and a full-width 'Ｃｏｄｅ Ｒｅｖｉｅｗ' too."""
    if name.casefold() == first.casefold():
        return "case"
    if unicodedata.normalize("NFKC", name).casefold() == unicodedata.normalize("NFKC", first).casefold():
        return "character width or case"  # full-width letters, a ligature ('ﬁ')

    def unmarked(text: str) -> str:
        return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))

    if unmarked(name).casefold() == unmarked(first).casefold():
        return "accents" if unmarked(name) == unmarked(first) else "accents or case"
    marked = unmarked(name) != unicodedata.normalize("NFKD", name) or unmarked(first) != unicodedata.normalize(
        "NFKD", first
    )
    return "case, spacing, punctuation or accents" if marked else "case, spacing or punctuation"


def _vague_description(
    source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any], minimum: float
) -> list[Diagnostic]:
    """Descriptions feed the lexical matcher; one with a handful of distinct terms ('TODO', 'Supports
    plugins.') matches nothing. Term entropy in bits, computed by `semantics.description_stats` (the one
    implementation, also behind the site's quality figures), against lint.min_description_entropy.
    """
    description = capability.get("description")
    if not isinstance(description, str) or not description.strip():
        return []
    stats = description_stats(description)
    if not low_information(stats, minimum):
        return []
    return [
        source.diagnostic(
            (*parts, "description"),
            "warning",
            f"description too vague to be found by its words: {plural(stats.unique_terms, 'distinct word')} a"
            f" question can match{', much repeated' if stats.total_terms > 2 * stats.unique_terms else ''}"
            f" ({stats.entropy:.1f} bits of term entropy, under {minimum:g})",
            "say what it does, when to use it and its limits, in words someone would ask with; for one the agent"
            " lacks, what it lacks and what to use instead",
            "vague-description",
        )
    ]


def _deprecation_and_date(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    """A deprecated record (by `status` or `maturityLevel`) has a `deprecatedDate`, and only a deprecated one has.

    A date on a record that is not deprecated contradicts itself: the build would say both (no † in the
    matrices, "deprecated <date>" in the agent's page and the lookup answer). An error either way, since only
    the author knows which half is true; `deprecatedDate: null` is no date (nor is a blank one: that is `blank`). A
    null put for a YAML value JSON cannot hold is neither half: nothing is said."""
    if any(source.is_nulled((*parts, key)) for key in ("status", "maturityLevel", "deprecatedDate")):
        return []
    status_says = capability.get("status") == "deprecated"
    if status_says or capability.get("maturityLevel") == "deprecated":
        if capability.get("deprecatedDate"):
            return []
        where, message = "status" if status_says else "maturityLevel", "deprecated capability without deprecatedDate"
        hint = "add deprecatedDate: YYYY-MM-DD (when it was deprecated)"
    elif isinstance(date_written := capability.get("deprecatedDate"), str) and date_written.strip():
        where, message = "deprecatedDate", "deprecatedDate on a capability that is not deprecated"
        hint = "if it is deprecated, say so: status: deprecated; otherwise remove deprecatedDate"
    else:
        return []
    return [source.diagnostic((*parts, where), "error", message, hint, "deprecated-date")]


def _repeated_sources(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    """One page cited twice by one record (the same `url`, as written but for surrounding space): the build numbers
    it twice, and the two citations' dates and statuses can disagree about one page (`source-repeated`)."""
    first: dict[str, int] = {}
    problems = []
    for index, citation in textrules.items(capability, "sources"):
        url = citation.get("url")
        if not isinstance(url, str) or not url.strip():
            continue
        if (earlier := first.setdefault(url.strip(), index)) != index:
            message = f"source {quote(url.strip())} is cited twice (first as sources[{earlier}])"
            message += textrules.cited_by(capability)
            hint = "cite each page once: keep one citation (the newer verifiedDate) and remove the other"
            problems.append(
                source.diagnostic((*parts, "sources", index, "url"), "warning", message, hint, "source-repeated")
            )
    return problems


# docs/data-format.md, "Conventions for the optional labels": unavailable capabilities carry none of these. A label
# says how the agent offers a capability (plan, maturity, status), which one it does not have contradicts.
UNAVAILABLE_CARRY_NONE = ("tier", "maturityLevel", "status")


def _unavailable_labels(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    """`available: false` with a `tier`, `maturityLevel` or `status` (not null): the pages and answers would show
    "✗" beside "pro" or "stable" (`unavailable-label`). `limitations` are not among them: the convention does not
    name them, and "what it lacks" can be a fact worth recording about an absent capability."""
    if capability.get("available") is not False:
        return []
    problems = []
    for key in UNAVAILABLE_CARRY_NONE:
        if capability.get(key) is not None:
            message = f"{key} on an unavailable capability (available: false)"
            hint = f"remove {key}: a capability the agent lacks has none, by the conventions of docs/data-format.md"
            problems.append(source.diagnostic((*parts, key), "warning", message, hint, "unavailable-label"))
    return problems


def _no_sources(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    """`available: true` citing nothing (no `sources`, or `"sources": []`): a claim with no source at all, which
    deserves at least the attention `never-verified` gives a cited page nobody has checked (`no-sources`). A record
    with `available: false` may cite nothing: an absence is rarely documented. A `sources` of the wrong type is the
    schema's error."""
    if capability.get("available") is not True or capability.get("sources", []) != []:
        return []
    name = capability.get("name")
    message = f"available capability {quote(name)} cites no source" if isinstance(name, str) else ""
    hint = "add sources: the url of the page that states it (then verifiedDate once checked), or set available: false"
    return [source.diagnostic(parts, "warning", message or "available capability cites no source", hint, "no-sources")]


def _use_when_patterns(source: SourceFile, parts: tuple[Any, ...], capability: dict[str, Any]) -> list[Diagnostic]:
    problems = []
    for index, rule in textrules.items(capability, "useWhen"):
        pattern = rule.get("pattern")
        if not isinstance(pattern, str):
            continue
        where = (*parts, "useWhen", index, "pattern")
        problems += [
            source.diagnostic(where, severity, message, hint, "use-when-regex")
            for severity, message, hint in _pattern_findings(pattern)
        ]
    return problems


@lru_cache(maxsize=8192)
def _pattern_findings(pattern: str) -> tuple[tuple[Severity, str, str | None], ...]:
    """What compiling `pattern` reports: an error, or the regex engine's warnings. Remembered per pattern
    (catalogs repeat a capability's patterns in every agent's document; compiling is the costly part)."""
    if len(pattern) > MAX_PATTERN_CHARS:  # not even compiled
        message = f"regular expression of {len(pattern):,} characters (at most {MAX_PATTERN_CHARS})"
        return (("error", message, "a useWhen pattern names a few phrasings; split long ones into several rules"),)
    findings: list[tuple[Severity, str, str | None]] = []
    # The regex engine warns (e.g. "Possible nested set") only when it compiles a pattern, not when
    # it serves one from its cache, so the cache is cleared for the result not to depend on history.
    re.purge()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            at = f" at position {exc.pos}" if exc.pos is not None else ""
            findings.append(
                ("error", f"invalid regular expression: {exc.msg}{at}", "patterns are Python regular expressions")
            )
    findings += [("warning", f"regular expression: {warning.message}", None) for warning in caught]
    if findings and findings[0][0] == "error":
        return tuple(findings)
    return tuple(findings) + _pattern_risk(pattern)


def _pattern_risk(pattern: str) -> tuple[tuple[Severity, str, str | None], ...]:
    """An error for a pattern shaped to backtrack catastrophically (`regexrisk`), which the server must not run.

    Only `re` compiles the pattern here. The server matches with the `regex` package in `re`-compatible mode
    (`regex.V0`), which accepts what `re` accepts (tests/test_security_regex.py compares the two on many
    odd patterns); compiling each pattern with both engines as well doubled this check's cost (~0.05 s of
    `regex` compiling and ~0.03 s importing it on the bundled catalog, a third of a `capidx validate`)."""
    risk = backtracking_risk(pattern)
    if risk:
        return (("error", f"regular expression may backtrack catastrophically: {risk[0]}", risk[1]),)
    return ()


def _excerpt_missing(
    source: SourceFile, parts: tuple[Any, ...], citation: dict[str, Any], of: str = ""
) -> list[Diagnostic]:
    if citation.get("sourceGranularity") != "excerpt" or citation.get("excerpt"):
        return []
    return [
        source.diagnostic(
            (*parts, "sourceGranularity"),
            "error",
            f"sourceGranularity is 'excerpt' but there is no excerpt{of}",
            "quote the supporting passage (50-300 characters) in excerpt",
            "excerpt-required",
        )
    ]


def _freshness(
    source: SourceFile,
    parts: tuple[Any, ...],
    citation: dict[str, Any],
    staleness: Staleness,
    today: date,
    of: str = "",
) -> list[Diagnostic]:
    """Freshness of one citation; `of` (`cited_by`) names the record's capability in each message. Its warnings are
    made in reading order (a citation after another), so past a file's cap of one code they are only counted."""
    if "verifiedDate" not in citation:
        if source.past_cap("never-verified", parts):
            return []
        return [
            source.diagnostic(
                parts,
                "warning",
                f"source never verified{of}",
                "check that it supports the claim, then add verifiedDate: YYYY-MM-DD",
                "never-verified",
            )
        ]
    verified = _date(citation["verifiedDate"])
    if verified is None:
        return []  # the schema reports the malformed date
    where, age = (*parts, "verifiedDate"), (today - verified).days
    if age < 0:
        return [
            source.diagnostic(
                where,
                "error",
                f"verifiedDate {verified} is in the future (today is {today}){of}",
                "a source can only have been verified on or before today",
                "future-date",
            )
        ]
    if staleness.error_days is not None and age > staleness.error_days:
        return [
            source.diagnostic(
                where,
                "error",
                f"verified {age} days ago, over the {staleness.error_days}-day limit{of}",
                _REVERIFY,
                "too-old",
            )
        ]
    if age > staleness.warn_days and source.past_cap("stale" if age > staleness.old_days else "verified-age", where):
        return []
    if age > staleness.old_days:
        return [
            source.diagnostic(
                where, "warning", f"stale: verified {age} days ago (over {staleness.old_days}){of}", _REVERIFY, "stale"
            )
        ]
    if age > staleness.warn_days:
        return [
            source.diagnostic(
                where,
                "warning",
                f"verified {age} days ago (over {staleness.warn_days}){of}",
                _REVERIFY,
                "verified-age",
            )
        ]
    return []


def _no_capabilities(source: SourceFile) -> list[Diagnostic]:
    """`"capabilities": []`: a document that records nothing about its agent, usually a stub or a generator's
    failure. It adds a column of "not recorded" to every matrix (summary.md is in every conversation). A warning,
    not an error: the agent is still named (the server resolves it and answers that the catalog has no data on
    it, which is not a no), a placeholder some catalogs keep on purpose; `--strict` refuses it."""
    if not isinstance(source.data, dict) or source.data.get("capabilities") != []:
        return []
    hint = "record at least one capability (available: false for one it lacks), or leave the agent out for now"
    return [source.diagnostic(("capabilities",), "warning", "no capabilities recorded", hint, "no-capabilities")]


# A document edited "today" anywhere on Earth can carry a timestamp up to this late on the checker's `today`:
# the end of that day at UTC-12, the last time zone to leave it.
_LAST_ZONE_END = time(12, tzinfo=UTC)


def _future_edit(source: SourceFile, today: date) -> list[Diagnostic]:
    """`agent.lastUpdated` after today, like a `verifiedDate` after today: an edit cannot have happened yet.

    The timestamp carries its own offset, so only an instant later than `today` in every time zone is
    refused: a maintainer east of a CI runner, who commits early on their tomorrow, is not in the future."""
    agent = source.data.get("agent") if isinstance(source.data, dict) else None
    written = agent.get("lastUpdated") if isinstance(agent, dict) else None
    edited = _instant(written)
    if edited is None or today == date.max or edited <= datetime.combine(today + timedelta(days=1), _LAST_ZONE_END):
        return []
    return [
        source.diagnostic(
            ("agent", "lastUpdated"),
            "error",
            f"lastUpdated {written} is in the future (today is {today})",
            "a document can only have been edited on or before today",
            "future-date",
        )
    ]


def _instant(value: Any) -> datetime | None:
    """An RFC 3339 date-time with its offset as an aware datetime, or None (the schema reports a malformed one)."""
    if not isinstance(value, str) or len(value) > _MAX_DATE_TIME:
        return None
    try:
        instant = datetime.fromisoformat(value.upper())
    except ValueError:  # also a leap second (…:60), which RFC 3339 allows and Python cannot represent
        return None
    return instant if instant.tzinfo is not None else None


def _date(value: Any) -> date | None:
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


# Names not found (alias targets, successors) that one check looks for a spelling of among the catalog's names; the
# rest get the general hint. Each look is bounded (`close_match`), but one per record of a large catalog was not:
# 2,000 records each naming a successor no capability has took validate 78 s, 10,000 would take half an hour.
MAX_SPELLINGS_SOUGHT = 100
_SPELLING_WORK = 5 * CLOSE_MATCH_WORK  # names of a catalog of thousands are compared with each of those
_NO_NAME = "use the name of a capability in some agent's document"


# An alias table's phrase whose capability is gone (init's example agent replaced) is most often to be removed.
_NO_NAME_OR_REMOVE = f"{_NO_NAME}, or remove the alias"


def _closest(word: str, candidates: Iterable[str], otherwise: str = _NO_NAME) -> str:
    by_folded = {candidate.casefold(): candidate for candidate in candidates}
    close = close_match(word.casefold(), by_folded, budget=_SPELLING_WORK)
    if close is not None:
        return f"did you mean {quote(by_folded[close])}?"
    return otherwise
