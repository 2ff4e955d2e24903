"""Issue #14, finding 4: a `useWhen` regex from the data must not be able to freeze anything.

`capidx validate` refuses patterns shaped to backtrack catastrophically (and overlong ones), for whoever runs
them; the server runs none of a catalog's patterns, so even a build that carries such a pattern (written by hand
here, as a build from elsewhere could) answers promptly.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from server_support import CAPABILITIES, Cap, capidx_command, write_build

from capidx.cli import cli

EVIL = (r"^(a+)+$", r"^(a|a)+$", r"^(\w+\s?)+$")
ATTACK = "a" * 40 + "!"  # each extra "a" doubles a backtracking engine's work on the patterns above
# A guard only (no pytest-timeout here): today's matcher takes minutes on ATTACK, a bounded one a fraction of a second.
GUARD_SECONDS = 60


def _document(patterns: list[str]) -> dict[str, object]:
    return {
        "agent": {"name": "Alpha", "vendor": "Example", "version": "1", "lastUpdated": "2026-01-10T00:00:00Z"},
        "capabilities": [
            {
                "name": "Code Review",
                "category": "testing",
                "description": "Reviews a change, explains the problems it finds and proposes concrete fixes in place.",
                "available": False,  # nothing to cite: no warning besides the patterns' own
                "useWhen": [{"pattern": pattern, "confidence": 0.5} for pattern in patterns],
            }
        ],
    }


def _validate(tmp_path: Path, patterns: list[str]) -> tuple[int, dict[str, object]]:
    target = tmp_path / "agents" / "alpha" / "capabilities" / "current.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(_document(patterns), indent=2), encoding="utf-8")
    args = ["validate", "--agents", str(tmp_path / "agents"), "--no-aliases", "--format", "json"]
    result = CliRunner().invoke(cli, args)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.output)


@pytest.mark.parametrize(
    "pattern",
    [
        *EVIL,
        r"(x{1,9}){2,}",
        r"(ab|a)*c",
        r"(?:\d+)*z",
        r"^(a?a?)+$",  # a turn takes none, one or two letters
        r"^(?:a?){26}a{26}$",  # 2**26 ways to choose which turns take one
        r"(a{1,2}){20}",
        r"^(aa?)+$",  # turns of one or two of the same letter
        r"^(?:\d\d?)+$",
        r"^(?:a?){16}(?:a?){16}a{32}$",  # 32 choices in two groups
        "^" + "a?" * 30 + "a" * 30 + "$",  # the same written out
        r"^(?:(?:a?){16}b){16}$",  # choices multiplied by turns
        "(?>" + "a?" * 26 + "a" * 26 + ")",  # an atomic group commits only after its inside backtracked
        "(?:" + "a?" * 26 + "a" * 26 + ")++",
        "(a)?(?(1)" + "a?" * 26 + "a" * 26 + "|b)",
        "^" + "a{1,3}" * 24 + "$",  # ranges decide how much: 24 choices
    ],
)
def test_validate_refuses_a_pattern_that_backtracks_catastrophically(tmp_path: Path, pattern: str) -> None:
    code, report = _validate(tmp_path, [pattern])
    assert code == 1
    [diagnostic] = report["diagnostics"]
    assert diagnostic["code"] == "use-when-regex"
    assert diagnostic["pointer"] == "$.capabilities[0].useWhen[0].pattern"
    assert diagnostic["line"] and diagnostic["col"]
    assert "backtrack catastrophically" in diagnostic["message"]


@pytest.mark.parametrize(
    "pattern",
    [
        r"\b(code review|review (my|this) (pr|diff))\b",  # alternation, not repeated
        r"\b(run|start)\b.{0,30}\b(tests?|build)\b",  # one bounded quantifier, nothing nested
        r"(ab|cd)+",  # repeated alternatives that start differently
        r"(a++)+",  # the inner part is possessive: it cannot be re-split
        r"((?>a+)b)+",  # nor inside an atomic group
        r"(\w|-)+",  # one character class, repeated
        r"(a?)+",  # a turn that takes nothing ends the repeat: one way to split
        r"(\d?){3}",  # a few turns: at most 2**3 ways
        r"^P(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$",  # ISO 8601 durations
        "^" + "-".join([r"\w+"] * 17) + "$",  # many repeats, none optional
        r"\b(tests?|specs?|docs?|files?|mocks?|stubs?|fixtures?|builds?|runs?|jobs?|steps?|tasks?|hooks?|rules?)\b",
    ],
)
def test_validate_accepts_safe_patterns(tmp_path: Path, pattern: str) -> None:
    code, report = _validate(tmp_path, [pattern])
    assert code == 0, report
    assert not [d for d in report["diagnostics"] if d["code"] == "use-when-regex"]


def test_validate_refuses_an_overlong_pattern(tmp_path: Path) -> None:
    code, report = _validate(tmp_path, ["|".join(f"word{number}" for number in range(200))])
    assert code == 1
    [diagnostic] = report["diagnostics"]
    assert diagnostic["code"] == "use-when-regex" and "characters (at most" in diagnostic["message"]


def _server(build: Path) -> StdioServerParameters:
    command, *rest = capidx_command("serve", "--build", str(build), "--no-reload")
    return StdioServerParameters(command=command, args=rest, cwd=build.parent)


@pytest.mark.anyio
async def test_an_evil_pattern_in_a_build_does_not_freeze_the_server(tmp_path: Path) -> None:
    """The build is written by hand (validation would refuse the data): the server never runs a catalog's
    patterns (the resolver ranks words), so an evil one costs it nothing."""
    evil = Cap(
        "Evil Patterns",
        "testing",
        "A capability whose useWhen rules backtrack catastrophically on a long run of one letter.",
        agents={"claude-code": {"available": True}},
        use_when=tuple((pattern, 0.9) for pattern in EVIL),
    )
    build = write_build(tmp_path / "build", caps=(*CAPABILITIES, evil))
    async with Client(_server(build), mode="auto", cache=None) as client:
        with anyio.fail_after(GUARD_SECONDS):
            compared = await client.call_tool("compare_capability", {"capability": ATTACK})
            looked_up = await client.call_tool("lookup_capability", {"agent": "claude", "capability": ATTACK})
        assert compared.content and looked_up.content  # an answer (a "not found" with suggestions is fine)
        with anyio.fail_after(GUARD_SECONDS):  # and the server still answers
            hooks = await client.call_tool("compare_capability", {"capability": "hooks"})
        assert not hooks.is_error and json.loads(hooks.content[0].text)["capability"]["slug"] == "hooks"
