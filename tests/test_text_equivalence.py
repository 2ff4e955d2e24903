"""The fast paths of the text helpers and derivations give exactly what the plain definitions give.

The build's output must not change by a byte when a derivation is made cheaper, so each optimized
function is compared with a straightforward reference implementation on varied inputs.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata

import pytest

from capidx.compiler.derive.relations import KeywordSource, keyword_set, keyword_sets
from capidx.compiler.derive.semantics import SemanticStats, description_stats, term_entropy
from capidx.schema.text import STOP_WORDS, canonical_json, normalize, stem, terms

_ALPHABET = "abcXYZ019 -_.,;:!?/\\'\"\t\n\x1c\x85\u00a0éÉßİﬁ①Ωω漢字🙂\u200b\u2028"


def _reference_normalize(text: str) -> str:
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    unaccented = "".join(c for c in folded if not unicodedata.combining(c))  # 'é' is 'e', not a separator
    return re.sub(r"[^0-9a-z]+", " ", unaccented).strip()


def _reference_terms(text: str) -> list[str]:
    return [stem(word) for word in re.findall(r"[0-9a-z]+", _reference_normalize(text)) if word not in STOP_WORDS]


def _random_texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words = ["Running", "tests", "the", "MCP-Servers", "policies", "edited", "a", "Debugging", "ﬁles", "ＷＩＤＥ"]
    texts = ["", " ", "---", "The", "Run the tests for testing and lint", "Ünïcödé façade naïve"]
    for _ in range(count):
        if rng.random() < 0.5:
            texts.append("".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40))))
        else:
            texts.append(rng.choice(" .,-").join(rng.choice(words) for _ in range(rng.randint(1, 12))))
    return texts


def test_normalize_and_terms_match_the_regex_definitions() -> None:
    # One test over all the texts, not one test per text: the same check, without 400 tests' overhead.
    for text in _random_texts(400):
        assert normalize(text) == _reference_normalize(text), text
        assert terms(text) == _reference_terms(text), text


def test_terms_returns_a_fresh_list() -> None:
    first = terms("run the tests")
    first.append("x")
    assert terms("run the tests") == ["run", "test"]


def test_description_stats_matches_term_entropy() -> None:
    for text in _random_texts(60, seed=11):
        found = terms(text)
        expected = SemanticStats(round(term_entropy(found), 3), len(set(found)), len(found))
        assert description_stats(text) == expected, text


def test_keyword_sets_merge_like_keyword_set() -> None:
    sources = [
        KeywordSource("a", "Plan mode", ("planning",), "Draft a plan", ("plan",), ("make a plan",)),
        KeywordSource("a", "Plan mode", (), "Review the plan before edits"),
        KeywordSource("b", "Hooks", description="Run shell commands at lifecycle events"),
    ]
    expected: dict[str, frozenset[str]] = {}
    for source in sources:
        expected[source.key] = expected.get(source.key, frozenset()) | keyword_set(source)
    assert keyword_sets(sources) == dict(sorted(expected.items()))


def test_canonical_json_is_compact_sorted_utf8() -> None:
    value = {"b": [1, 2.5, None, True], "a": {"z": "é🙂", "y": ""}, "é": 0}
    assert canonical_json(value) == '{"a":{"y":"","z":"é🙂"},"b":[1,2.5,null,true],"é":0}'
    assert canonical_json(value) == json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("key", ["relationships", "a", "m", "similarTo", "é"])
@pytest.mark.parametrize("document", [{}, {"agent": "x", "b": [1, 2]}, {"sameCapability": ["a"], "supersededBy": "z"}])
def test_with_member_splices_like_canonical_json(document: dict[str, object], key: str) -> None:
    from capidx.compiler.render.plan import _with_member

    value = [{"capability": "b", "score": 0.5, "shared": ["é"]}]
    assert _with_member(document, key, canonical_json(value)) == canonical_json({**document, key: value})
    assert _with_member(document, key, None) == canonical_json(document)


def test_tool_documents_match_the_derive_documents() -> None:
    from catalog_factory import ALIASES, documents

    from capidx.compiler.catalog import build_catalog
    from capidx.compiler.derive import tool_documents as derive
    from capidx.compiler.derive.enhance import enhance
    from capidx.compiler.render.plan import tool_artifacts

    catalog = build_catalog(documents().items(), ALIASES)
    enhanced = enhance(catalog)
    texts = {artifact.path: artifact.text for artifact in tool_artifacts(catalog, "capidx://", enhanced)}
    for capability in catalog.capabilities:
        slug = capability.slug
        for agent in catalog.agent_ids:
            lookup = derive.lookup_document(agent, capability, enhanced.relationships(capability, agent))
            assert texts[f"tools/lookup/{agent}/{slug}.json"] == canonical_json(lookup)
            record = capability.record(agent)
            sources = derive.sources_document([record] if record else [], agent=agent, capability=slug)
            assert texts[f"tools/sources/{agent}/{slug}.json"] == canonical_json(sources)
        compare = derive.compare_document(catalog, capability, enhanced.relationships(capability))
        assert texts[f"tools/compare/{slug}.json"] == canonical_json(compare)
        every = derive.sources_document(capability.records, agent=None, capability=slug)
        assert texts[f"tools/sources/_all/{slug}.json"] == canonical_json(every)
    for agent in catalog.agents:
        own = derive.sources_document(agent.capabilities, agent=agent.id, capability=None)
        assert texts[f"tools/sources/{agent.id}/_all.json"] == canonical_json(own)
    lists = [path for path in texts if path.startswith("tools/list/")]
    assert len(lists) > len(catalog.agents)
    for path in lists:
        agent, category = (None if part == "_all" else part for part in path[len("tools/list/") : -5].split("/"))
        pairs = [
            (capability, record)
            for capability in catalog.capabilities
            for record in capability.records
            if agent in (None, record.agent) and category in (None, record.category)
        ]
        assert texts[path] == canonical_json(derive.list_document(pairs, agent=agent, category=category))


def test_a_citations_details_are_its_source_fields_without_the_url() -> None:
    """A sources row gives its URL once: each citation's details are the source entry's fields (the lookup's and
    the site's) without it, left out by `source_fields` itself rather than built and deleted."""
    from catalog_factory import ALIASES, documents

    from capidx.compiler.catalog import build_catalog
    from capidx.compiler.derive import tool_documents as derive

    catalog = build_catalog(documents().items(), ALIASES)
    sources = [source for agent in catalog.agents for record in agent.capabilities for source in record.sources]
    assert any(source.excerpt for source in sources) and any(source.status for source in sources)
    for source in sources:
        full = derive.source_fields(source, excerpt=True)
        without = {key: value for key, value in full.items() if key != "url"}
        assert derive.source_fields(source, excerpt=True, url=False) == without == derive.citation_details(source)
        assert full["url"] == source.url


def test_an_accent_is_spelling_not_a_separator() -> None:
    """'Café Mode' is 'cafe mode' for the build's slugs and the server's matching alike (one shared function):
    dropping the accented letter made 'caf-mode', the same slug as 'Caf Mode'."""
    from capidx.schema.text import normalize, slugify, terms

    assert normalize("Café Mode") == "cafe mode"
    assert slugify("Résumé Über Straße") == "resume-uber-strasse"
    assert terms("naïve café") == terms("naive cafe")
    assert normalize("C++ Support") == normalize("C# Support")  # told apart by validate, not here
