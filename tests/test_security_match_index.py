"""What a fork's catalog makes of the match index (`index/match.json`, compiler/derive/match.py): no row grows faster
than the text it comes from (docs/security.md, "Reading")."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

from server_support import real_build

from capidx.compiler.derive.match import NICKNAME_WORDS

_WORDS = ["".join(pair) for pair in itertools.product("bcdfghjklmnpqrstvwxz", repeat=2)]


def _long_named_agents(root: Path, count: int) -> Path:
    """`count` agents, each named by 200 characters: 66 words of two letters, shuffled apart per agent."""
    for i in range(count):
        words = _WORDS[:]
        random.Random(i).shuffle(words)
        name = f"{' '.join(words[:65])} n{i}"[:200]
        document = {
            "agent": {"name": name, "vendor": "V", "version": "1", "lastUpdated": "2026-01-01T00:00:00Z"},
            "capabilities": [
                {"category": "security", "name": "Sandbox Mode", "description": "Runs shell commands in a sandbox."}
                | {"available": True}
            ],
        }
        target = root / "agents" / f"agent-{i}" / "capabilities" / "current.json"
        target.parent.mkdir(parents=True)
        target.write_text(json.dumps(document), encoding="utf-8")
    return root / "agents"


def test_an_agent_name_of_many_words_makes_a_bounded_number_of_short_nicknames(tmp_path: Path) -> None:
    """Every run of an agent name's words was a nickname (`agentNames`): a name may hold 200 characters, 66 words,
    whose runs are 2,000 keys of 70 characters on average, so 1,000 such agents (a 0.5 MB catalog) made a 190 MB
    match index, a build of 115 s and 4.3 GB and a server that took 48 s to load it. Nicknames are made of the first
    `NICKNAME_WORDS` words of a name (a leading run also with the vendor before it); the whole name still names its
    agent."""
    build = real_build(_long_named_agents(tmp_path, 3), tmp_path / "build")
    names = json.loads((build / "index" / "match.json").read_text(encoding="utf-8"))["agentNames"]
    long_keys = [key for key in names if len(key.split()) > NICKNAME_WORDS + 1]  # a run may follow the vendor
    assert len(long_keys) <= 3 * 2, long_keys  # each agent's whole name, and the vendor before it
    assert len(names) <= 3 * 100, len(names)  # 46 an agent; 2,000 before
    assert sum(len(key) for key in names) < 3 * 5_000, sum(len(key) for key in names)
    for i in range(3):
        whole = next(key for key in long_keys if key.endswith(f" n{i}") and not key.startswith("v "))
        assert names[whole] == [f"agent-{i}"]
