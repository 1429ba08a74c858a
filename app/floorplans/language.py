"""Load the lark grammar once and derive the language's vocabularies from it.

A ``Language`` bundles the compiled LALR parser with a ``Vocabulary``: the alternatives of the
enumeration rules (``!wall_type: "solid" | ...``) read from the grammar's own rules. Everything
that needs "the list of wall types" asks the vocabulary, so adding an alternative to the grammar
is the only change needed for it to appear in schemas, docs and validation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from lark import Lark
from lark.lexer import PatternStr

GRAMMAR_PATH = Path(__file__).with_name("floorplan.lark")

# Grammar rule name -> vocabulary attribute. These are the "type unions" of the language.
ENUM_RULES: dict[str, str] = {
    "wall_type": "wall_types",
    "wall_side": "wall_sides",
    "direction": "directions",
    "alignment": "alignments",
    "door_type": "door_types",
    "swing": "swings",
    "room_kind": "room_kinds",
}


@dataclass(frozen=True)
class Vocabulary:
    """The enumerations of the language, in grammar order."""

    wall_types: tuple[str, ...]
    wall_sides: tuple[str, ...]
    directions: tuple[str, ...]
    alignments: tuple[str, ...]
    door_types: tuple[str, ...]
    swings: tuple[str, ...]
    room_kinds: tuple[str, ...]
    keywords: frozenset[str] = field(default_factory=frozenset)

    def by_rule(self, rule: str) -> tuple[str, ...]:
        return getattr(self, ENUM_RULES[rule])


@dataclass
class Language:
    """A compiled grammar plus the vocabulary derived from it."""

    grammar_text: str
    parser: Lark
    vocabulary: Vocabulary
    # terminal name -> literal text for keyword terminals (used to word error messages)
    literals: dict[str, str]
    # frozenset of terminal names -> enum rule name (to say "a wall type" instead of a list)
    enum_by_terminals: dict[frozenset[str], str]

    @classmethod
    def from_text(cls, grammar_text: str) -> Language:
        parser = Lark(grammar_text, parser="lalr", lexer="contextual",
                      keep_all_tokens=True, maybe_placeholders=False)
        literals = {t.name: t.pattern.value for t in parser.terminals
                    if isinstance(t.pattern, PatternStr)}
        alternatives: dict[str, list[str]] = {rule: [] for rule in ENUM_RULES}
        terminals: dict[str, set[str]] = {rule: set() for rule in ENUM_RULES}
        for rule in parser.rules:
            origin = rule.origin.name
            name = origin.value if hasattr(origin, "value") else str(origin)
            if name not in alternatives:
                continue
            if len(rule.expansion) != 1 or rule.expansion[0].name not in literals:
                raise ValueError(f"enumeration rule {name!r} must list plain keywords")
            term = rule.expansion[0].name
            alternatives[name].append(literals[term])
            terminals[name].add(term)
        missing = [rule for rule, values in alternatives.items() if not values]
        if missing:
            raise ValueError(f"grammar lacks enumeration rules: {', '.join(missing)}")
        words = frozenset(v for v in literals.values() if v[:1].isalpha())
        vocab = Vocabulary(**{ENUM_RULES[r]: tuple(v) for r, v in alternatives.items()},
                           keywords=words)
        enum_by_terminals = {frozenset(t): r for r, t in terminals.items()}
        return cls(grammar_text, parser, vocab, literals, enum_by_terminals)


@cache
def default_language() -> Language:
    """The language defined by the packaged grammar file (compiled once per process)."""
    return Language.from_text(GRAMMAR_PATH.read_text(encoding="utf-8"))
