"""What an answer says of records: the asked agents' data with no record of the capability, a name found in other
agents' records only, and a record that cites nothing.

A lookup answers `recorded: false` (and no `available`) for an agent whose data does not mention the capability,
and an empty source list for a record that cites nothing: alone, a model reads either as a no or a lost answer.
These notes, said after the answer, keep "no data" from being read as "not supported".
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from capidx.schema.lexicon import PUNCTUATION, identifiers
from capidx.schema.text import bind_negation, canonical_json, normalize, terms
from capidx.server.listings import FEATURES, LONGEST_NAME_WORDS, shortened
from capidx.server.matchindex import Resolution
from capidx.server.names import best_first
from capidx.server.query import QUESTION_WORDS, analyse, root
from capidx.server.readings import quoted, some_of
from capidx.server.snapshot import Snapshot
from capidx.server.unlisted import NOT_LISTED_CHARS, fitting

# The tiers by which a query names a capability in words: an alias, wording or identifier as written, or a name or
# alias in other forms, perhaps with words asking about it ('JetBrains support': the alias 'JetBrains').
_NAMED_BY = frozenset(("alias", "terminology", "identifier", "stemmed"))
# The ranking's answers, read by their words, some perhaps corrected (`fuzzy`: a word mistyped is looked for as read,
# 'worktress' as 'worktrees'; a whole name mistyped, 'hoks', is read as the name's words, which its record has).
_READ_BY_WORDS = frozenset(("lexical", "fuzzy"))
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # where a camelCase word's words meet ('PreToolUse')
_SHORT_QUERY = 2  # words of a query each of which is a detail ('sandbox mode')
_HYPHENATED = re.compile(r"[^\W_]+(?:-[^\W_]+)+")  # 'mid-session', 'multi-file'; linear
_DETAIL_SHARED = 2  # capabilities a word may be in and still be a detail, in a catalog of fewer than 16 of them
_LISTED_NAMED = 3  # platforms or models of one kind `listed` names per agent, at most
_LISTED_CHARS = 80  # characters of a listed name `listed` says, at most (match.json may come from any build)
# Listed names sharing a word with the query that `listed` reads per call, at most, the asked agents' first: a build
# whose agents list thousands of models all named with one word ('gpt N turbo') made each call read every one
# (130 agents of 5,000: 410 ms a comparison).
_LISTED_READ = 4_096
_FLAGS = {
    "integrations": {True: " (supported)", False: " (not supported)"},
    "models": {True: " (available)", False: " (not available)"},
    FEATURES: {True: ", supported)", False: ", not supported)"},
}
_UNHELD_NAMED = 4  # words of a query named as missing from a record, at most
_AGENTS_NAMED = 6  # agents a sentence of `unheld` names, at most; then how many more
UNHELD_SENTENCES = 3  # sentences `unheld` says, at most: one per set of agents lacking words and set holding them
_RECORDS_READ = 64  # agents' records of one capability `unheld` reads, at most: the asked agents' first
# Hyphenated compounds of a query `lacking` looks for, at most: each is a search through the whole text of every record
# read, not a lookup in its roots, and a query of 200 characters holds twenty; 12 of them over 128 records of 100 KB
# took 550 ms a call (2.8 ms without them). The sentences name at most `_UNHELD_NAMED` words.
_COMPOUNDS_SOUGHT = _UNHELD_NAMED
_CLOSEST_SHARE = 0.5  # of a capability's name (its roots, by idf) another name must share to be said closest
_OTHERS_READ, _OTHERS_SAID = 8, 2  # an agent's other records `lacking` reads for a word it lacks, and names
_CLOSEST_SAID, _FEATURES_SAID = 2, 4  # records `_closest_recorded` names per agent, features `closest_features`
_LIMITS_SAID = 2  # limitations `limited` quotes, at most
_LIMIT_CHARS = 160  # characters of a limitation `limited` quotes, at most
# Limitations `limited` reads per call, and characters of each: a build's record may list thousands, and reading all of
# 64 records' (2,000 each) took 2 s per comparison.
_LIMITS_READ = 256
_LIMIT_READ_CHARS = 400


def unrecorded(snapshot: Snapshot, slug: str, agents: Iterable[str]) -> str:
    """Said after a lookup or comparison for the asked agents whose data does not mention the capability: their
    `recorded: false` would otherwise be read as a no. Then the records of theirs closest to it by name, where
    one is close (`_closest_recorded`)."""
    entry = snapshot.index.capabilities.get(slug)
    if entry is None:
        return ""
    lacking = [agent for agent in dict.fromkeys(agents) if agent not in entry.agents]
    closest = (_closest_recorded(snapshot, slug, lacking), closest_features(snapshot, slug, lacking))
    return " ".join(filter(None, (_no_record(lacking, [entry.name]), *closest)))


def closest_features(snapshot: Snapshot, slug: str, agents: Sequence[str]) -> str:
    """ "Closest by name among gemini-cli's integration features: PR reviews (of GitHub Actions, supported).": of an
    agent with no record of Code Review, a blind model test answered "no data" while its file lists reviews of pull
    requests where it runs. Features whose names share `_CLOSEST_SHARE` of the capability's name as
    `_closest_recorded` reads it (by idf, as roots), up to `_FEATURES_SAID` per agent, for `_AGENTS_NAMED` agents."""
    index = snapshot.index
    share = _name_share(snapshot, slug)
    written = set(shortened(terms(index.capabilities[slug].name)))  # as the listed names are read
    said = []
    for agent in agents[:_RECORDS_READ]:
        by_word = index.listings.words.get(agent, {})
        near = sorted({at for word in written for at in by_word.get(word, ())})[:_LISTED_READ]
        lists = index.listings.by_agent.get(agent, ())
        features = []
        for at in near:
            kind, name, flag, words, platform = lists[at]
            if platform is not None and share({root(word) for word in words}) >= _CLOSEST_SHARE:
                features.append(f"{_cut(name)} (of {_cut(platform)}{_FLAGS[kind].get(flag, ')')}")
        if features:
            closest = ", ".join(features[:_FEATURES_SAID])
            said.append(f"Closest by name among {agent}'s integration features: {closest}.")
    return " ".join(said[:_AGENTS_NAMED])


def _name_share(snapshot: Snapshot, slug: str) -> Callable[[Iterable[str]], float]:
    """The share of a capability's name (its roots, each weighed by its idf) that other roots hold: how close another
    name is to it (`_closest_recorded`, `closest_features`); 0 for a name of no weight."""
    idf, unknown = snapshot.index.ranker.idf, snapshot.index.ranker.unknown
    asked = snapshot.index.vocabulary.name_roots.get(slug, frozenset())
    weight = sum(idf.get(word, unknown) for word in asked)
    return lambda roots: sum(idf.get(word, unknown) for word in asked.intersection(roots)) / weight if weight else 0.0


def _closest_recorded(snapshot: Snapshot, slug: str, agents: Sequence[str]) -> str:
    """'Closest by name among vscode-copilot's records: Web Fetch (available).': a model told only that an agent has
    no record of Web Search said it could not reach the web, while its record of Web Fetch says it can (a blind model
    test). Capabilities whose names share at least `_CLOSEST_SHARE` of the name's words (weighted by how rare each
    is, idf; as roots), of the agents' own records, up to `_CLOSEST_SAID` each, for `_AGENTS_NAMED` agents with one.
    By names alone: the ranking's other fields are every agent's texts, which named another agent's words."""
    index = snapshot.index
    names, share = index.vocabulary.name_roots, _name_share(snapshot, slug)
    sharing = {other for word in names.get(slug, ()) for other in index.vocabulary.names.get(word, ())} - {slug}
    shares = {other: share(names[other]) for other in sharing}
    close = [index.capabilities[other] for other, shared in best_first(shares) if shared >= _CLOSEST_SHARE]
    close = close[:_RECORDS_READ]  # each agent's few are looked for among these
    said = []
    for agent in agents:
        mine = [entry for entry in close if agent in entry.agents][:_CLOSEST_SAID]
        marks = ", ".join(f"{e.name} ({'available' if e.available_to(agent) else 'not available'})" for e in mine)
        said += [(agent, marks)] if marks else []
    if len(said) == 1 and len(agents) == 1:
        return f"Closest by name among {said[0][0]}'s records: {said[0][1]}."
    listed = "; ".join(f"{agent}'s {marks}" for agent, marks in said[:_AGENTS_NAMED])
    extra = len(said) - _AGENTS_NAMED
    others = "1 more agent's" if extra == 1 else f"{extra:,} more agents'"
    more = f"; {others} too" if extra > 0 else ""
    return f"Closest by name among their records: {listed}{more}." if said else ""


def borrowed(
    snapshot: Snapshot, resolution: Resolution, agent: str | Sequence[str], shown: str = "answered above"
) -> str:
    """ "'GEMINI.md' is used in the Custom Instructions records of copilot-cli and gemini-cli; claude-code's record
    of Custom Instructions, answered above, does not use it." when a name, wording or identifier found the capability
    and other agents' records of it use the words (a phrase as one of their names for it) while the asked agent's does
    not: the answer would otherwise read as if that agent had it. Several asked agents (a comparison): those of them
    whose records do not use the words, and those whose records do, in one sentence. `shown`: what the answer above
    shows of that record. Of a capability hundreds of agents record, as in `unheld`, the agents named are among the
    `_RECORDS_READ` read."""
    entry = snapshot.index.capabilities.get(resolution.value or "")
    asked_agents = [agent] if isinstance(agent, str) else list(dict.fromkeys(agent))
    if resolution.resolved_by not in _NAMED_BY or entry is None or not snapshot.index.triggers_indexed:
        return ""  # an older build's index leaves trigger phrases out: an agent's may hold the words
    query = _naming(resolution)
    asked = _words(query)
    # A phrase is another agent's word only as one of its names for the capability (its wording or its own aliases):
    # 'choose model', from the alias table, is in one record's description as plain prose. An identifier is its own.
    phrase = resolution.resolved_by != "identifier"

    # An identifier is compared as itself, not as its words ('/compact' is not the 'compact' of 'auto-compact'): where
    # match.json places it, or within a longer one of the record ('.json' in 'settings.json').
    tokens = identifiers(resolution.query) if not phrase else ()

    def says(who: str, names_only: bool = False, as_written: bool = False) -> bool:  # in its record or aliases
        names = _own_names(entry.agents[who])  # and, for what its record uses, its trigger phrases
        names += [] if names_only else _strings(entry.agents[who].get("triggers"))
        document = None if names_only else snapshot.find("lookup", agent=who, capability=entry.slug)
        if tokens:
            text = " ".join(
                [canonical_json(names), *(_texts(document.text, "capability") if document else ())]
            ).casefold()
            return all(who in snapshot.index.identifier_holders(t, entry.slug) or _in_text(t, text) for t in tokens)
        held = [_words(name) for name in names]
        held += _text_words(document.text) if document is not None else ()  # not keys nor addresses
        forms = asked[:1] if as_written else asked  # as written, or also in other forms (`terms()`)
        return any(a and f" {a} " in f" {h} " for words in held for a, h in zip(forms, words, strict=False))

    # At most `_RECORDS_READ` records are read, the asked agents' first, as `lacking` reads them: each is a lookup
    # parsed, and a lookup lists every agent that has the capability, so reading all of a capability 1,400 agents
    # record parsed 124 MB of JSON per call, the agents squared.
    read = [who for who in asked_agents if who in entry.agents][:_RECORDS_READ]
    first = set(read)
    others = [who for who in sorted(entry.agents) if who not in first][: max(0, _RECORDS_READ - len(read))]
    lacking = [who for who in read if not says(who)]

    # An asked agent's record, shown above, uses the words where it has them as written ('worktrees' in a description;
    # not 'runs shell commands' for 'run_shell_command'); another's only as one of its names.
    def uses(who: str) -> bool:
        return says(who, phrase) if who not in first else says(who, as_written=phrase)

    owners = [who for who in sorted((*read, *others)) if who not in lacking and uses(who)] if lacking else []
    if not owners:
        return ""

    # As `_lacking` words it ('the Git Integration records of a and b'): never "the records of a and b of X".
    def records_of(ids: Sequence[str]) -> str:
        return f"{ids[0]}'s record of {entry.name}" if len(ids) == 1 else f"the {entry.name} records of {_agents(ids)}"

    # Asked agents whose records have the words only in other forms ('AI-credit' for 'ai credits') are said so.
    formed = [who for who in read if who not in lacking and who not in owners]
    has = "has" if len(formed) == 1 else "have"
    other_forms = f"; {records_of(formed)} {has} the words of '{query}' only in other forms" if formed else ""
    does = "does" if len(lacking) == 1 else "do"
    return f"'{query}' is used in {records_of(owners)}{other_forms}; {records_of(lacking)}, {shown}, {does} not use it."


def _naming(resolution: Resolution) -> str:
    """The words of the query that name the capability: a name or alias in other forms without the words that ask
    about it ('JetBrains' of 'does it support JetBrains?'); else the query as typed."""
    query = resolution.query.strip()
    if resolution.resolved_by != "stemmed":
        return query
    words = (word.strip(PUNCTUATION).rstrip(".") for word in query.split())
    return " ".join(word for word in words if set(terms(word)) - QUESTION_WORDS) or query


def unheld(snapshot: Snapshot, resolution: Resolution, agents: str | Sequence[str], elsewhere: bool = False) -> str:
    """ "gemini-cli's record of Git Integration does not use the word 'worktrees' in any form (copilot-cli's does)."
    when a capability was read by its words (ranked, not named, no word corrected) and words of the query are in no
    form in an asked agent's record of it: the record answers the capability, not necessarily what those words asked
    ('git worktrees'), and a model shown `available: true` would say yes to them. A word is compared as the ranking
    read it (its roots, an abbreviation's readings) and named as typed; one the analysis split ('autocompletion') is
    not named, nor a word of an asked agent's own names ('Gemini CLI Code Explanation'), nor, in a query of more
    than two words, a word more than an eighth of the catalog's capabilities have ('tool', 'session', 'terminal':
    which records say such a word is no finding, and read as one it misleads; an identifier is always a detail).
    Words lacking from the same asked agents' records and held by the same other records are said together, up to
    `UNHELD_SENTENCES` sentences (a comparison's summary speaks in one agent's words). `elsewhere`: only the words
    another agent's record of it has (a sentence's incidental words, 'my last edits', are in no record). At most
    `_RECORDS_READ` records are read (each is a document parsed), the asked agents' first: of a capability hundreds
    of agents record, the others named are some of those whose records use the words."""
    if resolution.resolved_by not in _READ_BY_WORDS:
        return ""
    return " ".join(lacking(snapshot, resolution, resolution.value or "", agents, elsewhere))


def lacking(
    snapshot: Snapshot,
    resolution: Resolution,
    slug: str,
    agents: str | Sequence[str],
    elsewhere: bool = False,
    sentences: int = UNHELD_SENTENCES,
) -> list[str]:
    """`unheld`'s sentences for one capability the query was ranked for (a suggestion of an unclear answer, too). None
    from a build whose index leaves records' trigger phrases out (`triggers_indexed`): a word may be in them."""
    entry = snapshot.index.capabilities.get(slug)
    if entry is None or not snapshot.index.triggers_indexed:
        return []
    listed = [agents] if isinstance(agents, str) else list(dict.fromkeys(agents))
    asked = [who for who in listed if who in entry.agents][:_RECORDS_READ]
    # The other records a word is looked for in: a capability of hundreds of agents is answered from some of them.
    others = [who for who in sorted(entry.agents) if who not in asked][: max(0, _RECORDS_READ - len(asked))]
    query = resolution.analysed or analyse(resolution.query, snapshot.index.vocabulary)
    fuzzy = resolution.resolved_by == "fuzzy"  # a word read as the index word it may be a typo of: looked for as read
    single = {u.words[0]: u for u in query.units if len(u.words) == 1 and (u.trust == 1.0 or fuzzy)}  # not split
    # An identifier the index has is a unit of its own ('copilot-instructions.md'), held by the records it occurs in
    # (match.json `identifiers`; the alias table's, without an agent, is in no record).
    where = frozenset(token for token in query.identifiers if token in single)
    holders = functools.cache(snapshot.index.identifier_holders)  # (token, slug) -> the agents whose records hold it
    names = snapshot.index.agent_names.words  # 'Gemini CLI Code Explanation': an asked agent's own name
    own_names = frozenset().union(*(names.get(who, frozenset()) for who in asked))
    typed = {_as_typed(resolution.query, token): token for token in where}  # a query word as typed -> its root
    detail = _is_detail(snapshot, resolution.query)
    written = normalize(resolution.query).split()
    # A word of a hyphenated compound ('mid' of 'mid-session') is no word the query used ('non-' joins its word).
    hyphenated = {token: normalize(token).split() for token in _HYPHENATED.findall(resolution.query)}
    compounded = {part for parts in hyphenated.values() for part in parts}
    vocabulary = snapshot.index.vocabulary
    for word in bind_negation(written):  # 'non-interactive' as the ranking reads it: one word
        found = [t for t in terms(word) if t not in QUESTION_WORDS and root(t) in single and detail(root(t))]
        # Of a mistyped answer, a word the index has no form of is a typo ('hoks' of a whole name), not a finding.
        found = [t for t in found if root(t) in vocabulary.roots] if fuzzy else found
        read = [c for t in terms(word) if (c := query.corrections.get(t))] if fuzzy and not found else []
        if fixed := [c for c in read if root(c) in single and detail(root(c)) and word not in own_names]:
            typed.setdefault(fixed[0], root(fixed[0]))  # named as read ('worktrees' for 'worktress')
        if found and word not in own_names and word not in compounded:
            typed.setdefault(word if word in written else f"non-{word[3:]}", root(found[0]))  # 'nonce' as written
    # A hyphenated compound is a word of its own ('auto-compaction'), held by a record that writes it with a hyphen, a
    # space or neither, its last part in any form: its parts alone ('auto', 'compaction') are in many a record.
    compounds: dict[str, re.Pattern[str]] = {}
    for token, parts in hyphenated.items():
        if len(compounds) >= _COMPOUNDS_SOUGHT:
            break
        keys = [root(t) for part in parts for t in terms(part)]  # none: stop words alone, a detail of a short query
        rare = any(map(detail, keys)) if keys else len(written) <= _SHORT_QUERY
        if len(parts) > 1 and parts[0] != "non" and rare and not set(parts) <= own_names:
            compounds.setdefault(token, _compound(parts))

    @functools.cache
    def read(who: str, slug: str = entry.slug) -> tuple[str, frozenset[str]]:
        """An agent's record of a capability, once per call: its text case-folded, and its roots (`_record`)."""
        documents = [snapshot.find(kind, agent=who, capability=slug) for kind in ("lookup", "sources")]
        # Its aliases, wording and trigger phrases: match.json holds them, the documents do not.
        recorded = snapshot.index.capabilities[slug].agents[who]
        names = [*_own_names(recorded), *_strings(recorded.get("triggers"))]
        parts = [_record(d.text, part) for d, part in zip(documents, ("capability", "sources"), strict=True) if d]
        texts = [canonical_json(names).casefold(), *(text for text, _ in parts)]
        return " ".join(texts), _roots(canonical_json(names)).union(*(held for _, held in parts))

    def has(who: str, key: str | re.Pattern[str], slug: str = entry.slug) -> bool:
        text, held = read(who, slug)
        if isinstance(key, re.Pattern):  # a compound
            return key.search(text) is not None
        if key in where:  # or within a longer one ('.json' in 'settings.json')
            return who in holders(key, slug) or _in_text(key, text)
        return any(set(words) <= held for words in (single[key].words, *single[key].alternatives))

    def own_others(who: str, key: str | re.Pattern[str]) -> list[str]:
        """The names of the agent's other records that use the word, of the capabilities the index finds it in, most
        first: 'OpenTelemetry' asked of claude-code read as Usage Tracking, whose record lacks it, while its Debug
        Logging record has it (a blind model test took the lack for a no)."""
        if isinstance(key, re.Pattern):
            return []
        index = snapshot.index
        if key in where:
            holders = {slug: weight for slug, _, weight in index.identifiers.get(key, ())}
        else:  # a word many records say ('command') is no finding where the agent's other records say it
            holders = dict(index.ranker.postings.get(key, {}))
            if len(holders) > max(_DETAIL_SHARED, len(index.capabilities) / 8):
                return []
        ranked = [s for s, _ in best_first(holders) if s != entry.slug and who in index.capabilities[s].agents]
        return [index.capabilities[s].name for s in ranked[:_OTHERS_READ] if has(who, key, s)][:_OTHERS_SAID]

    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}  # (lacking, holding) -> words
    checked: list[tuple[str, str | re.Pattern[str]]] = [*typed.items(), *compounds.items()]
    for word, key in checked:
        if without := tuple(who for who in asked if not has(who, key)):
            # A record of an agent that lacks the capability holds the word as what it lacks ('There is no editor
            # extension'): named beside the word, it read as the word's use.
            holding = tuple(
                who
                for who in sorted((*asked, *others))
                if who not in without and entry.available_to(who) and has(who, key)
            )
            if holding or not elsewhere:
                groups.setdefault((without, holding), []).append(word)
    said = list(groups.items())[:sentences]
    keys = dict(checked)

    def elsewhere_own(without: tuple[str, ...], words: list[str]) -> list[tuple[str, list[str]]]:
        if len(without) != 1:
            return []
        found = [(word, own_others(without[0], keys[word])) for word in words[:_UNHELD_NAMED]]
        return [(word, names) for word, names in found if names]

    return [
        _lacking(words, without, holding, entry.name, elsewhere_own(without, words))
        for (without, holding), words in said
    ]


def _is_detail(snapshot: Snapshot, query: str) -> Callable[[str], bool]:
    """Whether a root of `query` is a detail the notes may name: in a query of one or two words, any; in a longer
    one, a root at most an eighth of the catalog's capabilities have (`_DETAIL_SHARED` in a small catalog), not
    `tool` or `session`, which records say in passing."""
    short = len(normalize(query).split()) <= _SHORT_QUERY
    postings, common = snapshot.index.ranker.postings, max(_DETAIL_SHARED, len(snapshot.index.capabilities) / 8)
    return lambda key: short or len(postings.get(key, ())) <= common


def _compound(parts: Sequence[str]) -> re.Pattern[str]:
    """A hyphenated compound's parts as a case-folded record writes them ('auto-compaction', 'auto compaction',
    'autocompaction', 'auto-compacts'): the parts in order, each followed by a hyphen, a space or nothing, the last
    by its root and any ending. Linear: literal parts and one optional separator between each."""
    last = terms(parts[-1])
    ending = root(last[0]) if last else parts[-1]
    joined = "".join(f"{re.escape(part)}[\\s-]?" for part in parts[:-1])
    return re.compile(rf"(?<![a-z0-9]){joined}{re.escape(ending)}[a-z0-9]*")


def _as_typed(text: str, token: str) -> str:
    """An identifier token (case-folded: 'gemini.md') as the query has it ('GEMINI.md')."""
    folded = text.casefold()
    at = folded.find(token)
    return text[at : at + len(token)] if at >= 0 and len(folded) == len(text) else token


def _lacking(
    words: Sequence[str],
    lacking: Sequence[str],
    others: Sequence[str],
    name: str,
    own: Sequence[tuple[str, Sequence[str]]] = (),
) -> str:
    """ "gemini-cli's record of Git Integration does not use the word 'worktrees' in any form (copilot-cli's does)."
    Said of the word ('window' is a form of 'windows'), not of what it names: a record may say it in other words. `own`:
    the one lacking agent's other records that use a word ('; its record of Debug Logging does', of several words
    "; its record of Debug Logging uses '/mcp'")."""
    named = ", ".join(f"'{word}'" for word in list(words)[:_UNHELD_NAMED])
    word = f"the word {named}" if len(words) == 1 else f"the words {named}"
    if len(lacking) == 1:
        said = f"{lacking[0]}'s record of {name} does not use {word} in any form"
    else:
        said = f"The {name} records of {_agents(lacking)} do not use {word} in any form"
    if len(others) == 1:
        theirs = f" ({others[0]}'s does)"
    elif others:
        theirs = f" (those of {_agents(others)} do)"
    else:
        theirs = ""
    mine = []
    for word, names in own:
        records = f"its record{'s' if len(names) > 1 else ''} of {' and '.join(names)}"
        if len(words) == 1:
            mine.append(f"{records} {'do' if len(names) > 1 else 'does'}")
        else:
            mine.append(f"{records} {'use' if len(names) > 1 else 'uses'} '{word}'")
    return f"{said}{theirs}{'; ' + ', '.join(mine) if mine else ''}."


def _cut(name: str) -> str:
    return name if len(name) <= _LISTED_CHARS else f"{name[: _LISTED_CHARS - 1]}…"


def _agents(ids: Sequence[str]) -> str:
    """'a, b and c'; past `_AGENTS_NAMED`, 'a, b, c and 4 more' (a comparison of a large catalog's every agent)."""
    if len(ids) > _AGENTS_NAMED:
        return f"{', '.join(ids[:_AGENTS_NAMED])} and {len(ids) - _AGENTS_NAMED:,} more"
    return f"{', '.join(ids[:-1])} and {ids[-1]}"


def about_records(resolution: Resolution, agents: Sequence[str]) -> str:
    """ "'limitations' asks what records say, not about one capability: …" for a query whose every word asks about a
    record (`Query.asks_only`) and that resolved to no capability: its words alone found a capability whose record
    says 'limit' (Usage Metrics for 'what are its limitations'), while the answer is in each record."""
    if resolution.ok or resolution.analysed is None or not resolution.analysed.asks_only:
        return ""
    whose = f"{agents[0]}'s" if len(agents) == 1 else "the agents'"
    return (
        f"{quoted(resolution.query)} asks what records say, not about one capability: each record says its own; call"
        f" again with a capability (list_capabilities gives {whose}) to read its record."
    )


def listed(snapshot: Snapshot, query: str, agents: Sequence[str]) -> str:
    """ "claude-code's data lists JetBrains IDEs (supported) among its integrations." for each asked agent whose file
    lists a platform or model the query names ('JetBrains', 'GPT-5', 'does it run in VS Code'): no capability is
    about it, so the answer alone says nothing matches and that this is no no, while the agent's data says it. The
    query's words (those asking about a record, and the agent's own names, left out) name a listed name when they are
    all its words and not all words of capability names ('code' is no platform), or when it stands whole in the query
    and, for a name of one word, the query's other words name no capability ('github mcp server' asks MCP Servers,
    'VS Code extension' names VS Code too; a name of capability-name words alone, 'Web', only when it is the whole
    query). Up to `_AGENTS_NAMED` agents are named, then how many more;
    then the asked agents whose files list none of it (`_not_listed`)."""
    asked = list(shortened(terms(query)))  # as the listed names are read: 'pull request' is 'pr'
    names = snapshot.index.vocabulary.names.keys()

    def capability_words(words: Iterable[str]) -> bool:
        return {root(word) for word in words} <= names

    said, longer, listings = [], _longer_names(snapshot, asked), snapshot.index.listings
    left, cut = _LISTED_READ, False  # listed names still to be read in this call, over every agent; some left unread

    def named(who: str) -> dict[str, dict[str, str]]:
        """Kind -> the names `who`'s file lists that the query names, as said -> as listed (cut)."""
        nonlocal left, cut
        lists, by_word = listings.by_agent.get(who, ()), listings.words.get(who, {})
        # Every name said shares a word with the query (it stands in it whole, or holds all its other words).
        sharing = sorted({at for word in set(asked) for at in by_word.get(word, ())[: left + 1]})
        if len(sharing) > left:  # one more than is read tells whether any is left unread
            sharing, cut = sharing[:left], True
        left -= len(sharing)
        content = set(asked) - QUESTION_WORDS - snapshot.index.agent_names.words.get(who, frozenset())
        found: dict[str, dict[str, str]] = {}
        for at in sharing:
            kind, name, flag, words, platform = lists[at]
            listed_words = set(words)
            if platform is not None:  # a feature: asked by its words alone, beside its platform's ('vs code quick ask')
                mine = content - set(shortened(terms(platform)))
                if not mine or not mine <= listed_words or capability_words(mine):  # 'plugins' asks Plugins
                    continue
            else:
                whole = bool(words) and _stands_whole(words, asked, longer)
                rest = content - listed_words
                if whole and capability_words(listed_words) and rest:
                    whole = False  # 'web search' asks Web Search, not the platform Web
                # A name of several words standing whole names its platform whatever else is asked ('VS Code
                # extension': Extension System answered, and the agent's VS Code integration unsaid); one word may
                # qualify the capability asked ('github mcp server' asks MCP Servers).
                names_it = whole and (len(words) > 1 or not (rest and capability_words(rest)))
                if not names_it and not (content and content <= listed_words and not capability_words(content)):
                    continue
            # a build's data, cut: 'JetBrains IDEs (supported)', 'cloud agent sessions (of GitHub, supported)'
            of = f" (of {_cut(platform)}{_FLAGS[kind].get(flag, ')')}" if platform is not None else ""
            found.setdefault(kind, {})[f"{_cut(name)}{of or _FLAGS[kind].get(flag, '')}"] = _cut(name)
        return found

    asked_agents = list(dict.fromkeys(agents))
    unlisted, first = [], {}  # asked agents whose files list none of what the query names; the first found
    for who in asked_agents:
        if cut:
            break
        if found := named(who):
            parts = [f"{_and(list(items))} among its {kind}" for kind, items in found.items()]
            said.append(f"{who}'s data lists {' and '.join(parts)}.")
            first = first or found
        else:
            unlisted.append(who)
    more = len(said) - _AGENTS_NAMED
    agents_more = f"{more:,} more agent{'s' if more > 1 else ''}"
    tail = [f"The data of {agents_more} lists one too."] if more > 0 else []
    # Who lists none of it, once the query is known to name a listed name (an asked agent's, else another's).
    if unlisted and not first:
        # Only agents whose lists share a word with the query: a catalog of thousands is not walked per call.
        others = sorted({who for word in set(asked) for who in listings.holders.get(word, ())} - set(asked_agents))
        first = next((found for who in others if not cut and (found := named(who))), {})
    tail += _not_listed(snapshot, unlisted, first) if unlisted and not cut else []
    if cut:
        read = f"the first {_LISTED_READ:,} names the agents' data lists with a word of the query"
        tail.append(f"(Only {read} were read.)")
    return " ".join(said[:_AGENTS_NAMED] + tail)


def _not_listed(snapshot: Snapshot, unlisted: Sequence[str], found: Mapping[str, Mapping[str, str]]) -> list[str]:
    """ "ferrule's data does not list JetBrains IDEs among its integrations (it lists VS Code, Neovim)." for asked
    agents whose files list none of a platform or model the query names (`found`: as another agent's file lists it,
    'JetBrains plugin'): an answer of loose matches was read as "no data" where the file says what it has. At most
    `_AGENTS_NAMED` agents are said, each file's first `_LISTED_NAMED` names of that kind."""
    said, listings = [], snapshot.index.listings
    for kind, items in found.items():
        if kind == FEATURES:  # a feature is its platform's: said with it, never alone
            continue
        example = next(iter(items.values()))  # as listed, without that agent's flag
        for who in unlisted[:_AGENTS_NAMED]:
            names = [name for listed, name, *_ in listings.by_agent.get(who, ()) if listed == kind]
            shown = [_cut(name) for name in names[:_LISTED_NAMED]]
            lists = f"it lists {some_of(shown, len(names))}" if names else f"it lists no {kind}"
            # which is not a no: a file's list may be partial ('it lists GPT-5' beside a record saying "Anthropic
            # models"), and a model read the line as the agent lacking it (a blind model test)
            said.append(f"{who}'s data does not list {example} among its {kind} ({lists}), which is not a no.")
    return said


def limited(snapshot: Snapshot, query: str, shown: Sequence[tuple[str, Sequence[str]]], snippets: str = "") -> str:
    """ "ferrule's record of Contained Execution has the limitation: Not available on Windows." for a suggestion shown
    (its capability and the agents asked about it) whose record, of one of those agents, lists a limitation or a caveat
    (`implementationNotes.gotchas`) that holds a detail of the query (`lacking`'s: any word of a query of one or two
    words, else a word few capabilities have; or an identifier of the query, 'AGENTS.md', as written) and that no shown
    snippet (`snippets`, their text) says: a cross-agent snippet leaves limitations out, an agent's own snippet says
    only its first few, cut, and its ✓ read as covering the very case the text excludes ('run on Windows'; 'does it read
    AGENTS.md', which Gemini CLI does only once a setting names it). At most `_LIMITS_SAID` of them, each cut at
    `_LIMIT_CHARS`; at most `_LIMITS_READ` texts read, over every record, and the first `_LIMIT_READ_CHARS` characters
    of each."""
    said_there = f" {normalize(snippets)} "
    index, detail = snapshot.index, _is_detail(snapshot, query)
    details = {key for t in terms(query) if t not in QUESTION_WORDS and detail(key := root(t))}
    tokens = frozenset(identifiers(query))
    # A word of a shown suggestion's name is what matched it, no detail: 'sandbox' of 'sandbox on windows' is in
    # every limitation of Sandboxing, and quoting those left the one on Windows out.
    details -= frozenset().union(*(_roots(entry.name) for slug, _ in shown if (entry := index.capabilities.get(slug))))
    said: list[str] = []
    read = 0  # records read, over every suggestion: at most `_RECORDS_READ`, as `unheld` reads them
    left = _LIMITS_READ  # limitations read, over every record
    for slug, agents in shown:
        if (entry := index.capabilities.get(slug)) is None or not (details or tokens):
            continue
        for who in [who for who in dict.fromkeys(agents) if who in entry.agents][: max(0, _RECORDS_READ - read)]:
            if left <= 0 or len(said) >= _LIMITS_SAID:
                break  # nothing more to read or to say: no more records parsed
            read += 1
            # nor a word of the agent's own names ('Edits made outside Claude Code…' for 'claude …'), as in `lacking`
            theirs = details - {root(word) for word in index.agent_names.words.get(who, ())}
            document = snapshot.find("lookup", agent=who, capability=slug)
            record = json.loads(_part(document.text, "capability") or "null") if document else None
            texts = [(t, "limitation") for t in _strings(record.get("limitations"))] if isinstance(record, dict) else []
            notes = record.get("implementationNotes") if isinstance(record, dict) else None
            texts += [(t, "caveat") for t in _strings(notes.get("gotchas"))] if isinstance(notes, dict) else []
            for text, kind in texts[: max(0, left)] if len(said) < _LIMITS_SAID else []:
                left -= 1
                # Multi-line text, said on one line: its blank line would open a paragraph the answer never wrote.
                limit = " ".join(text[:_LIMIT_READ_CHARS].split())
                held = theirs & _roots(limit) or any(token in limit.casefold() for token in tokens)
                whole = len(limit) <= _LIMIT_CHARS and len(text) <= _LIMIT_READ_CHARS
                # What the note would quote is said already when a snippet holds it: the whole limitation, or the
                # part the note keeps of a long one (a snippet cuts it too, further on: the note would repeat it).
                quoted_there = f" {normalize(limit)} " if whole else f" {normalize(limit[: _LIMIT_CHARS - 1])}"
                if len(said) < _LIMITS_SAID and held and quoted_there not in said_there:
                    cut = limit if whole else f"{limit[: _LIMIT_CHARS - 1]}…"
                    end = "" if cut.endswith((".", "!", "?", "…")) else "."
                    said.append(f"{who}'s record of {entry.name} has the {kind}: {cut}{end}")
    return " ".join(said)


# Words that ask for what a record says a capability cannot do ('what are the limits of compaction'), as `terms()`
# gives them.
_LIMIT_WORDS = frozenset("limitation limit restriction restrict drawback downside caveat gotcha constraint".split())


def unlimited(snapshot: Snapshot, resolution: Resolution, agents: Sequence[str]) -> str:
    """ "copilot-cli's record of Context Compaction lists no limitations or caveats: none recorded, which does not say
    there are none." when the query asks for limitations ('compaction limitations') and an asked agent's record, which
    the answer shows, has neither: the record leaves the empty list out, and a model answered "no limitations" from
    its silence (two blind model tests). Not when the word is one of the capability's name ('usage limits')."""
    entry = snapshot.index.capabilities.get(resolution.value or "")
    if not resolution.ok or entry is None or not (set(terms(resolution.query)) & _LIMIT_WORDS) - set(terms(entry.name)):
        return ""
    bare = []
    for who in [who for who in dict.fromkeys(agents) if who in entry.agents][:_RECORDS_READ]:
        document = snapshot.find("lookup", agent=who, capability=entry.slug)
        record = json.loads(_part(document.text, "capability") or "null") if document else None
        notes = record.get("implementationNotes") if isinstance(record, dict) else None
        caveats = _strings(notes.get("gotchas")) if isinstance(notes, dict) else []
        if isinstance(record, dict) and not _strings(record.get("limitations")) and not caveats:
            bare.append(who)
    if not bare:
        return ""
    if len(bare) == 1:
        whose, verb, they = f"{bare[0]}'s record of {entry.name}", "lists", "it has"
    else:
        whose, verb, they = f"The {entry.name} records of {_agents(bare)}", "list", "they have"
    return f"{whose} {verb} no limitations or caveats: none recorded, which does not say {they} none."


def _longer_names(snapshot: Snapshot, asked: Sequence[str]) -> list[tuple[int, int]]:
    """The spans of the query's words that are a listed or agent name of several words, found once per call: a
    listed name within one ('github' of 'github actions', of 'github copilot') is not what the query names."""
    longer, n = snapshot.index.listings.longer, len(asked)
    return [
        (first, last)
        for first in range(n)
        for last in range(first + 2, min(n, first + LONGEST_NAME_WORDS) + 1)
        if tuple(asked[first:last]) in longer
    ]


def _stands_whole(words: Sequence[str], asked: Sequence[str], longer: Sequence[tuple[int, int]]) -> bool:
    """Whether a listed name's words stand in the query's somewhere not within a longer name's span (`_longer_names`):
    'github actions' names GitHub Actions, and 'github copilot' the Copilots, not GitHub."""
    size = len(words)
    for start in range(len(asked) - size + 1):
        end = start + size
        if tuple(asked[start:end]) == tuple(words) and not any(
            first <= start and end <= last and last - first > size for first, last in longer
        ):
            return True
    return False


def _and(names: Sequence[str]) -> str:
    """'A, B and C'; past `_LISTED_NAMED`, 'A, B, C and 4 more' (a file listing hundreds of models)."""
    if len(names) > _LISTED_NAMED:
        return f"{', '.join(names[:_LISTED_NAMED])} and {len(names) - _LISTED_NAMED:,} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _words(text: str) -> tuple[str, str]:
    """A text as normalized words and as `terms()`: 'pull requests' holds 'pull request' in the second form."""
    return normalize(text), " ".join(terms(text))


@functools.lru_cache(maxsize=1024)
def _part(document: str, part: str) -> str | None:
    """A document's `part` (a lookup's capability record, a sources document's rows) as canonical JSON, parsed once
    per document text; None when the document is no JSON."""
    try:
        value = json.loads(document)
    except (ValueError, RecursionError):
        return None
    return canonical_json(value.get(part) if isinstance(value, dict) else None)


def _in_text(token: str, text: str) -> bool:
    """An identifier in a record's text, also within a longer one ('.json' in 'settings.json'); a command ('/mcp')
    only as one, not as a part of a path ('.vscode/mcp.json' is no use of '/mcp')."""
    if not token.startswith("/"):
        return token in text
    return re.search(rf"(?<![\w/.~-]){re.escape(token)}(?![\w/-])", text) is not None


@functools.lru_cache(maxsize=1024)
def _record(document: str, part: str) -> tuple[str, frozenset[str]]:
    """A document's `part` as its texts (`_texts`) case-folded, to find an identifier in, and their roots (`_roots`):
    '/mcp' in '…/docs/en/mcp' was said to be used by the records that cite that page (a blind model test)."""
    text = " ".join(_texts(document, part))
    return text.casefold(), _roots(text)


@functools.lru_cache(maxsize=1024)
def _roots(text: str) -> frozenset[str]:
    """A text's roots, read generously, since `unheld` says a word is not there: each camelCase word also as its
    words ('PreToolUse': 'pre', 'tool', 'use'), each hyphenated word also written together ('Sub-agents' holds
    'subagents'), and each term also as if the light stem had dropped an 'e' ('pasted' is 'past' to `terms()`, and
    'paste' is not)."""
    found = terms(f"{text} {_CAMEL.sub(' ', text)} {text.replace('-', '')}")  # 'Sub-agents' also as 'Subagents'
    return frozenset(root(t) for term in found for t in (term, f"{term}e"))


def _strings(value: Any) -> list[str]:
    """The strings of a list from match.json (another value, none: a build's data is not trusted to be well formed)."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _own_names(record: Mapping[str, Any]) -> list[str]:
    """A record's own aliases and wording (match.json `agents`), the names its agent gives the capability."""
    aliases = record.get("aliases")
    return [
        name
        for name in (*(aliases if isinstance(aliases, list) else ()), record.get("terminology"))
        if isinstance(name, str)
    ]


@functools.lru_cache(maxsize=1024)
def _text_words(document: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        map(_words, _texts(document, "capability"))
    )  # once per document text: a comparison reads up to 64 records


@functools.lru_cache(maxsize=1024)
def _texts(document: str, part: str) -> tuple[str, ...]:
    """A document's `part` (a lookup's capability record, a sources document's rows) as its texts: not its keys, nor
    an address in them ('…/review-code-edits' is no use of 'review code edits', 'https://…/planning' of '/plan')."""
    try:
        value = json.loads(document)
    except (ValueError, RecursionError):
        return ()
    texts: list[str] = []
    stack = [value.get(part) if isinstance(value, dict) else None]
    while stack:  # a forged build's record may nest deeper than recursion goes
        item = stack.pop()
        if isinstance(item, str):
            texts.append(" ".join(word for word in item.split() if "://" not in word) if "://" in item else item)
        elif isinstance(item, list | dict):
            stack.extend(item.values() if isinstance(item, dict) else item)
    return tuple(texts)


def _no_record(agents: list[str], names: list[str]) -> str:
    """'copilot-cli's data has no record of Plugins: no data, not a no.'; '' when no agent lacks a record. Up to
    `_AGENTS_NAMED` agents are named, then how many more: a comparison of a 150-agent catalog named 33."""
    if not agents:
        return ""
    whose = f"{agents[0]}'s data has" if len(agents) == 1 else f"The data of {_agents(agents)} have"
    return f"{whose} no record of {', '.join(names)}: no data, not a no."


def uncited(snapshot: Snapshot, found: Resolution, agent: str) -> str:
    """An agent's record that cites nothing is answered with an empty list, which alone reads like a lost answer.
    Nothing when the agent has no record of the capability: the build writes an empty sources document for every
    pair, and the answer's hint already says there is no data (there is no record to cite nothing)."""
    entry = snapshot.index.capabilities.get(found.value or "")
    if entry is None or agent not in entry.agents:
        return ""
    document = snapshot.find("sources", agent=agent, capability=found.value)
    value = document.value if document is not None else None  # parsed on each use: once here
    if not isinstance(value, dict) or value.get("sources"):
        return ""
    return f"{agent}'s record of {entry.name} cites no sources."


def uncited_records(snapshot: Snapshot, agent: str) -> str:
    """After an agent's sources: its records that cite nothing, which the list of URLs cannot show ("copilot-cli's
    records of Plugins, Web Search cite no sources."), their names within `NOT_LISTED_CHARS` characters, then how
    many more, said as a list's note says them (`readings.some_of`). Read from the agent's sources document: a record
    it cites in no row cites nothing."""
    document = snapshot.find("sources", agent=agent, capability=None)
    value = document.value if document is not None else None
    rows = value.get("sources") if isinstance(value, dict) else None
    if not isinstance(rows, list):
        return ""
    cited = {
        citation.get("capability")
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("citations"), list)
        for citation in row["citations"]
        if isinstance(citation, dict)
    }
    names = [
        entry.name for slug, entry in snapshot.index.capabilities.items() if agent in entry.agents and slug not in cited
    ]
    if not names:
        return ""
    records, cites = ("record", "cites") if len(names) == 1 else ("records", "cite")
    return f"{agent}'s {records} of {some_of(fitting(names, NOT_LISTED_CHARS), len(names))} {cites} no sources."
