"""index/match.json: everything the server needs to resolve names, computed once at build time (pure).

Keys are normalized with the server's own `normalize`/`terms` so build and run time cannot drift.
The shape is specified in docs/build-directory.md ("index/match.json" and "The enhanced index").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import chain
from typing import Any

from capidx.compiler.catalog import Agent, CanonicalCapability, Capability, Catalog
from capidx.compiler.derive.enhance import Enhanced, enhance
from capidx.schema.lexicon import identifiers
from capidx.schema.text import STOP_WORDS, normalize, stem, terms

# 2: the agents rows of each capability carry their trigger phrases, which a server reads before it says a record
# does not use a word (a server reading a version 1 index says nothing of the kind: its records' triggers are unknown).
INDEX_VERSION = 2

# Words too common in product names to stand for one agent on their own ("code" is Claude Code and
# VS Code; "cli" is half the market). They still count inside longer names ("copilot cli").
GENERIC_NAME_WORDS = frozenset(
    """ai agent agents app assistant chat cli code coder coding desktop dev editor extension ide in for of on
    plugin pro studio terminal the tool tools vs web""".split()
)

# Well-known product names and how people shorten them: an agent named "... in Visual Studio Code" is
# also "... in VS Code" and "... in vscode". Applied to agent names before any nickname is derived.
PRODUCT_ABBREVIATIONS: Mapping[str, tuple[str, ...]] = {"visual studio code": ("vs code", "vscode")}

# The words of an agent's name (and id) its nicknames are made of: the first 8; every name measured has fewer. A name
# may hold 200 characters, some 66 words; every run of them was a nickname, 2,000 keys of 70 characters on average per
# agent, and a catalog of 1,000 such agents made a match index of 190 MB (a build of 115 s and 4.3 GB, a server that
# loaded it in 48 s and compared a mistyped agent name with every key, over a minute per call).
NICKNAME_WORDS = 8

# Words that name a *kind* of feature in every agent, not one feature. An agent's wording that is only
# one such word after normalization ("@ commands" -> "commands") would claim the word for one
# capability, so it is not a terminology key (multi-word wordings always are). Singular forms; a word
# is compared as it is and stemmed ("commands" -> "command").
GENERIC_FEATURE_WORDS = frozenset(
    """agent chat code command config configuration context editor feature file mode model option prompt
    session setting shell terminal tool""".split()
)


def _agent_row(agent: Agent) -> dict[str, Any]:
    """An agent's id, name and vendor, and the names of the platforms (with their features) and models its file lists
    with whether it says it supports them: a capability query that names one ('JetBrains', 'GPT-5', 'cloud agent
    sessions') is told where the data says so, and an agent named by its vendor alone ('Google') that it was read so."""
    row: dict[str, Any] = {"id": agent.id, "name": agent.name, "vendor": agent.vendor}  # the schema requires a vendor
    if platforms := [i for i in agent.integrations if i.platform]:
        row["integrations"] = [
            _present(name=i.platform, supported=i.supported, features=list(i.features) or None) for i in platforms
        ]
    if models := [(m.name, m.available) for m in agent.models if m.name]:
        row["models"] = [_present(name=name, available=flag) for name, flag in models]
    return row


def _present(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def match_index(catalog: Catalog, enhanced: Enhanced | None = None) -> dict[str, Any]:
    """The index; `enhanced` (default: computed with default settings and no `injection`) gives the term
    analysis, the `similarTo` edges and the `injection` section."""
    enhanced = enhanced if enhanced is not None else enhance(catalog)
    index = {
        "version": INDEX_VERSION,
        "agents": [_agent_row(agent) for agent in catalog.agents],
        "agentNames": agent_names(catalog.agents),
        "capabilities": [_capability_entry(capability, enhanced) for capability in catalog.capabilities],
        "aliases": _aliases(catalog),
        "terminology": _terminology(catalog),
        "categories": list(catalog.categories),
        # defined by the schema, used by no capability: asked about, the server says the catalog records nothing there
        "emptyCategories": sorted(set(catalog.defined_categories) - set(catalog.categories)),
        "identifiers": _identifiers(catalog),
    }
    if enhanced.injection:
        index["injection"] = dict(enhanced.injection)
    return index


def _capability_entry(capability: CanonicalCapability, enhanced: Enhanced) -> dict[str, Any]:
    agents: dict[str, Any] = {}
    texts = [capability.name]
    described: list[str] = []  # the records' descriptions: the ranking model's `description` field
    aliases = set(capability.table_aliases)
    triggers: set[str] = set()
    for record in capability.records:
        agent: dict[str, Any] = {"available": record.available}
        if record.terminology:
            agent["terminology"] = record.terminology
            texts.append(record.terminology)
        if record.aliases:  # the agent's own names for it: whose word a query was (server/records.py `borrowed`)
            agent["aliases"] = sorted(record.aliases)
        if record.triggers:  # what a user says when they need it: words the record uses (server/records.py `lacking`)
            agent["triggers"] = list(dict.fromkeys(record.triggers))
        agents[record.agent] = agent
        aliases.update(record.aliases)
        triggers.update(record.triggers)
        texts.append(record.description)
        described.append(record.description)
        texts.extend(text for _, text in details(record))
    texts.extend(sorted(aliases))
    texts.extend(sorted(triggers))
    return {
        "slug": capability.slug,
        "name": capability.name,
        "category": capability.category,
        "agents": agents,
        "aliases": sorted(aliases),
        "terms": dict(sorted(_counted(enhanced, texts).items())),
        "description": dict(sorted(_counted(enhanced, described).items())),
        "descriptions": list(dict.fromkeys(described)),  # as written: the server embeds them (server/semantic.py)
        "similarTo": [
            {"capability": edge.target, "score": edge.score} for edge in enhanced.similar.get(capability.slug, ())
        ],
    }


def _counted(enhanced: Enhanced, texts: Iterable[str]) -> Counter[str]:
    """Term counts of the texts, identifier tokens (`/compact`, `claude.md`) beside the words they contain."""
    return Counter(chain.from_iterable((*enhanced.terms_of(text), *identifiers(text)) for text in texts))


# Where an identifier (`/compact`, `CLAUDE.md`, `--yolo`: `capidx.schema.lexicon.identifiers`) was found in a
# record, from the field that names a capability most directly to the one that only mentions it.
IDENTIFIER_FIELDS = ("name", "terminology", "alias", "description", "detail", "source")


def details(record: Capability) -> list[tuple[str, str]]:
    """(field, text) of what a record says beyond its name and description: limitations, requirements,
    implementation notes ("detail") and its sources' descriptions and excerpts ("source"). Searched as
    description text; where people find identifiers (`configFile: ".mcp.json"`)."""
    found = [("detail", text) for text in (*record.limitations, *record.requirements)]
    if notes := record.notes:
        found += [("detail", text) for text in (notes.setup, notes.config_file, *notes.gotchas) if text]
    for source in record.sources:
        found += [("source", text) for text in (source.description, source.excerpt) if text]
    return found


def _identifiers(catalog: Catalog) -> dict[str, list[dict[str, str]]]:
    """Identifier token -> where it occurs: `{"capability", "agent", "field"}` (agent omitted for the alias
    table), the strongest field per capability and agent. One pass over the catalog's texts (linear)."""
    best: dict[str, dict[tuple[str, str], int]] = {}

    def add(text: str, slug: str, agent: str, field: str) -> None:
        rank = IDENTIFIER_FIELDS.index(field)
        for token in identifiers(text):
            places = best.setdefault(token, {})
            places[(slug, agent)] = min(places.get((slug, agent), rank), rank)

    for capability in catalog.capabilities:
        add(capability.name, capability.slug, "", "name")
        for alias in capability.table_aliases:
            add(alias, capability.slug, "", "alias")
        for record in capability.records:
            add(record.terminology or "", capability.slug, record.agent, "terminology")
            for alias in (*record.aliases, *record.triggers):
                add(alias, capability.slug, record.agent, "alias")
            add(record.description, capability.slug, record.agent, "description")
            for field, text in details(record):
                add(text, capability.slug, record.agent, field)
    return {
        token: [
            {"capability": slug, **({"agent": agent} if agent else {}), "field": IDENTIFIER_FIELDS[rank]}
            for (slug, agent), rank in sorted(places.items())
        ]
        for token, places in sorted(best.items())
    }


def _aliases(catalog: Catalog) -> dict[str, str]:
    """Normalized alias -> slug. The alias table wins over capabilities' own aliases; among those the
    first capability by slug wins (validate reports an alias claimed by two capabilities)."""
    table: dict[str, str] = {}
    for phrase, slug in catalog.alias_table:
        table.setdefault(normalize(phrase), slug)
    for capability in catalog.capabilities:
        for record in capability.records:
            for alias in record.aliases:
                table.setdefault(normalize(alias), capability.slug)
    return dict(sorted(table.items()))


def _terminology(catalog: Catalog) -> dict[str, list[dict[str, str]]]:
    """Normalized wording -> the (agent, capability) pairs using it. A wording listed inside a longer one
    ("memory files" in "CLAUDE.md (memory files)") counts unless it is the whole wording of another of the
    same agent's records ("skills" as a record's whole terminology beats "skills" in "custom commands / skills")."""
    wording: dict[str, set[tuple[str, str]]] = {}
    whole: set[tuple[str, str]] = set()  # (key, agent)
    listed: list[tuple[str, str, str]] = []
    for capability in catalog.capabilities:
        for record in capability.records:
            keys = wording_keys(record.terminology or "")
            full = normalize(record.terminology or "")
            for key in keys:
                if key == full:
                    wording.setdefault(key, set()).add((record.agent, capability.slug))
                    whole.add((key, record.agent))
                else:
                    listed.append((key, record.agent, capability.slug))
    for key, agent, slug in listed:
        if (key, agent) not in whole:
            wording.setdefault(key, set()).add((agent, slug))
    return {
        key: [{"agent": agent, "capability": slug} for agent, slug in sorted(pairs)]
        for key, pairs in sorted(wording.items())
    }


# Where one `terminology` value lists several wordings: "CLAUDE.md (memory files)", "/compact, auto-compact",
# "custom commands / skills", "print mode; headless". A slash only separates with spaces around it
# ("#web/fetch" is one wording).
_WORDING_SEPARATORS = re.compile(r"\s*(?:[,;()]|\s/\s)\s*")


def wording_keys(terminology: str) -> list[str]:
    """The normalized terminology keys of one record's wording: the whole wording and each wording of two or
    more words it lists, those that may stand for a capability on their own (`terminology_key`)."""
    whole = normalize(terminology)
    parts = [normalize(part) for part in _WORDING_SEPARATORS.split(terminology)]
    # A listed wording of one meaningful word ("Edit" in "file edit tools (Edit, Write)", "on finish") is too
    # loose on its own.
    listed = [part for part in parts if len(terms(part)) > 1]
    return [key for key in dict.fromkeys([whole, *listed]) if terminology_key(key)]


def terminology_key(key: str) -> bool:
    """Whether a normalized wording may stand for a capability on its own: a phrase of several words
    ("plan mode"), or one distinctive word ("extensions"): at least three letters, not a stop word and not
    a generic feature word ("commands", "mode", "files", "settings", "tools": `GENERIC_FEATURE_WORDS`)."""
    words = key.split()
    if len(words) != 1:
        return len(words) > 1
    word = words[0]
    generic = word in GENERIC_FEATURE_WORDS or stem(word) in GENERIC_FEATURE_WORDS
    return len(word) > 2 and word not in STOP_WORDS and not generic


def agent_names(agents: Iterable[Agent]) -> dict[str, list[str]]:
    """Every way people name an agent -> the agent ids it may mean.

    Strong names belong to their agent alone: the id, the name, the vendor followed by the name ("google gemini
    cli"), each also with well-known product names abbreviated (`PRODUCT_ABBREVIATIONS`: "copilot in vs code"),
    and the name's shorter or reordered forms (`_shortenings`: without the vendor, "<host> <product>").
    Nicknames map to every agent they fit, so "copilot" and "github copilot" name both Copilot agents and the
    server reports them as ambiguous: distinctive single words of the name or id, runs of two or more words of
    the name without the vendor, leading words of the name ("github copilot"), the vendor followed by leading
    words of the name without it ("google gemini"), and the vendor; each of the first `NICKNAME_WORDS` words of
    the name and id (a name of 66 words made 2,000 nicknames). A strong name is never diluted by a nickname
    of another agent.

    A shortening whose every word another agent's name or id also has is a nickname of all those agents instead:
    "Cursor Agent" by Cursor leaves "agent", which "Junie Agent" has too, so "agent" is ambiguous rather than a
    name of Cursor's agent alone. So is an alias (`agent.aliases`): "Claude" given to another agent names both, and
    never takes Claude Code's id or name from it.
    """
    agents = list(agents)
    strong: dict[str, set[str]] = {}
    weak: dict[str, set[str]] = {}
    having = _agents_having(agents)
    for agent in agents:
        for key in _strong_names(agent):
            strong.setdefault(key, set()).add(agent.id)
        for key in _nicknames(agent):
            weak.setdefault(key, set()).add(agent.id)
        for key in _shortenings(agent) | _other_names(agent):
            others = _others_having(having, key, agent.id)
            (weak if others else strong).setdefault(key, set()).update({agent.id, *others})
    merged = {key: ids for key, ids in weak.items() if key not in strong}
    merged.update(strong)
    return {key: sorted(ids) for key, ids in sorted(merged.items()) if key}


def _agents_having(agents: Iterable[Agent]) -> dict[str, set[str]]:
    """Word -> the agents whose name (or an abbreviated form of it) or id has it: who else a shortening may mean."""
    having: dict[str, set[str]] = {}
    for agent in agents:
        for word in naming_words(agent.id, agent.name):
            having.setdefault(word, set()).add(agent.id)
    return having


def _others_having(having: Mapping[str, set[str]], key: str, agent_id: str) -> set[str]:
    """The agents other than `agent_id` whose name or id has every word of `key`."""
    found = [having.get(word, set()) for word in key.split()]
    return set.intersection(*found) - {agent_id} if found else set()


def naming_words(agent_id: str, name: str) -> set[str]:
    """The words of an agent's id and name, the name's well-known product names abbreviated too: a shortening or an
    alias of another agent whose every word is among them names this agent as well (`agent_names`; validate's
    `agent-name` warning says so of an alias)."""
    return {*normalize(agent_id).split(), *chain.from_iterable(_name_variants(name))}


def _name_variants(name: str) -> list[list[str]]:
    """The agent's name as words, then the same name with each well-known product name abbreviated."""
    variants = [normalize(name)]
    for long, shorts in PRODUCT_ABBREVIATIONS.items():
        for variant in list(variants):
            if f" {long} " in f" {variant} ":
                variants += [f" {variant} ".replace(f" {long} ", f" {short} ").strip() for short in shorts]
    return [variant.split() for variant in variants]


def _strong_names(agent: Agent) -> set[str]:
    """The id and the whole name, as written and with the vendor before it when it does not say it."""
    keys = {normalize(agent.id), agent.id.replace("-", "")}
    vendor = normalize(agent.vendor)
    for words in _name_variants(agent.name):
        keys.add(" ".join(words))
        if _without_vendor(agent, words) == words:  # the name does not say who makes it: "google gemini cli"
            keys.add(f"{vendor} {' '.join(words)}")
    return keys


def _other_names(agent: Agent) -> set[str]:
    """The agent's other names (`agent.aliases`), normalized: strong unless another agent's name or id has all their
    words too (`agent_names`)."""
    return {key for key in map(normalize, agent.aliases) if key}


def _shortenings(agent: Agent) -> set[str]:
    """The name without the vendor's words, and for "<product> in <host>" both orders without "in" ("vs code
    copilot", "copilot vscode"): shorter or reordered names, strong unless another agent's name or id has all
    their words too (`agent_names`)."""
    keys: set[str] = set()
    for words in _name_variants(agent.name):
        own = _without_vendor(agent, words)
        if own != words:
            keys.add(" ".join(own))
        if "in" in own[1:-1]:  # "<product> in <host>": also said "<host> <product>" and "<product> <host>"
            split = own.index("in")
            product, host = " ".join(own[:split]), " ".join(own[split + 1 :])
            keys.update((f"{host} {product}", f"{product} {host}"))
    return keys


def _nicknames(agent: Agent) -> set[str]:
    """Distinctive words, runs and leading words of the name, the vendor and its leading words, a product it names.
    A well-known product name is one word here: 'visual studio' is another product than 'visual studio code', and a
    run that cut it named VS Code Copilot silently for a question about Visual Studio (a blind model test)."""
    vendor = normalize(agent.vendor)
    name = _products_whole(normalize(agent.name).split()[:NICKNAME_WORDS])  # its runs: the square of its words
    words = _without_vendor(agent, name)
    ids = normalize(agent.id).split()[:NICKNAME_WORDS]
    keys = {vendor, *(word for word in [*words, *ids] if _distinctive(word))}
    for start in range(len(words)):
        for end in range(start + 2, len(words) + 1):
            phrase = words[start:end]
            if phrase[0] not in STOP_WORDS and phrase[-1] not in STOP_WORDS:
                keys.add(" ".join(phrase))
                if len(phrase) == 2 and " " not in "".join(phrase):
                    keys.add("".join(phrase))  # "vs code" is also typed "vscode"
    keys.update(_leading(name))  # "github copilot" for "github copilot cli"
    if words == name:
        keys.update(f"{vendor} {lead}" for lead in _leading(words))  # "google gemini"
    text = f" {' '.join(name)} "
    for long, shorts in PRODUCT_ABBREVIATIONS.items():
        if f" {long} " in text:
            keys.update(shorts)  # the product alone: "vs code"
    return keys


def _products_whole(words: list[str]) -> list[str]:
    """The words with each well-known product name (`PRODUCT_ABBREVIATIONS`) joined into one: no run cuts it."""
    joined: list[str] = []
    i = 0
    while i < len(words):
        at = words[i:]
        product = next((long for long in PRODUCT_ABBREVIATIONS if at[: long.count(" ") + 1] == long.split()), "")
        joined.append(product or words[i])
        i += product.count(" ") + 1
    return joined


def _leading(words: list[str]) -> list[str]:
    """Leading runs of words that could be said on their own: not ending in a stop word, a single word
    only when distinctive."""
    runs = [words[:end] for end in range(1, len(words))]
    return [" ".join(run) for run in runs if run[-1] not in STOP_WORDS and (len(run) > 1 or _distinctive(run[0]))]


def _without_vendor(agent: Agent, words: list[str]) -> list[str]:
    vendor = set(normalize(agent.vendor).split())
    kept = [word for word in words if word not in vendor]
    return kept or words


def _distinctive(word: str) -> bool:
    return word not in STOP_WORDS and word not in GENERIC_NAME_WORDS and len(word) > 1
