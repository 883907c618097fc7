"""YAML read strictly: a key given twice in one mapping is an error naming its line, never a silent "last one wins".

    data = load_strict(text, "configs/run.yaml")      # ConfigError: "... line 7: key 'lr' is given twice ..."

PyYAML's ``safe_load`` lets ``max_steps: 8`` after ``max_steps: 4`` win quietly, and a second ``optim:`` section
replace the first whole. Every YAML file leviathan reads and every ``key=value`` override goes through
``StrictLoader``, a ``SafeLoader`` whose ``construct_mapping`` refuses a key an earlier key of the same mapping
has. Merge keys (``<<: *defaults``) are not duplicates: a key given beside a merge overrides the merged one, as YAML
specifies. Only ``SafeLoader`` tags are accepted (no Python objects).
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import ConfigError
from .float_text import FLOAT_SIZES, float_lost

__all__ = ["StrictLoader", "DuplicateKeyError", "AmbiguousNumberError", "QuotedText", "TooDeepError",
           "AliasLoopError",
           "TooManyValuesError", "parse",
           "load_strict"]


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping holds the same key twice: ``key``, the 1-based ``line`` of the repeat and of the ``first``."""

    def __init__(self, key: Any, line: int, first: int, node_mark, how: str = ""):
        self.key, self.line, self.first, self.how = key, line, first, how  # how: " by two maps of one merge ..."
        super().__init__(None, None, f"key {key!r} is given twice{how} (lines {first} and {line})", node_mark)


MERGE = "tag:yaml.org,2002:merge"


def _check_merges(node: yaml.MappingNode) -> None:
    """``DuplicateKeyError`` for a merge key (``<<``) given twice in one mapping, or a key that two maps of one merge
    list (``<<: [*a, *b]``) both give: PyYAML kept one of them without a word (the last ``<<``; of a list, not the
    first map YAML's merge rule names), where every other key given twice is refused (issue 30 round 31, Z54, Z55).
    A key given beside a merge still overrides the merged one, as YAML specifies. A merge nested in a merged map is
    held to the same rule: ``optim: {<<: {<<: [{lr: 0.1}, {lr: 0.2}]}}`` kept one lr without a word, since SafeLoader
    flattens a merged map without constructing it (issue 30 round 32, AB41)."""
    merges = [(key, value) for key, value in node.value if key.tag == MERGE]
    if len(merges) > 1:
        first, second = merges[0][0], merges[1][0]
        raise DuplicateKeyError("<<", second.start_mark.line + 1, first.start_mark.line + 1, second.start_mark,
                                " (the merge key: put every merged map in one list, '<<: [*a, *b]')")
    if not merges:
        return
    merged = merges[0][1]
    subs = merged.value if isinstance(merged, yaml.SequenceNode) else [merged]
    for sub in subs:  # a merge inside a merged map: SafeLoader flattens it without constructing it (round 32, AB41)
        if isinstance(sub, yaml.MappingNode):
            _check_merges(sub)
    if not isinstance(merged, yaml.SequenceNode):
        return
    own = {key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode) and key.tag != MERGE}
    seen: dict[Any, int] = {}
    for sub in subs:
        if not isinstance(sub, yaml.MappingNode):
            continue  # SafeLoader refuses a merged value that is no map, in its own words
        for key_node in _given_keys(sub):
            if key_node.value in own:
                continue  # a key the mapping gives itself overrides every merged one: no doubt which holds
            line = key_node.start_mark.line + 1
            if key_node.value in seen:
                raise DuplicateKeyError(key_node.value, line, seen[key_node.value], key_node.start_mark,
                                        " by two maps of one merge list ('<<: [...]'), which keeps one of them")
            seen[key_node.value] = line


def _given_keys(node: yaml.MappingNode, depth: int = 0) -> list:
    """The scalar key nodes a mapping gives, its own and those its merges give it (each once: its own override a
    merged one), so a key that one map of a merge list gives through a merge of its own is seen (round 32, AB41)."""
    keys = [key for key, _ in node.value if isinstance(key, yaml.ScalarNode) and key.tag != MERGE]
    names = {key.value for key in keys}
    for key, value in node.value if depth < 50 else ():
        if key.tag == MERGE:
            for sub in value.value if isinstance(value, yaml.SequenceNode) else [value]:
                if isinstance(sub, yaml.MappingNode):
                    for inner in _given_keys(sub, depth + 1):
                        if inner.value not in names:
                            keys.append(inner)
                            names.add(inner.value)
    return keys


class StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises ``DuplicateKeyError`` for a key repeated in one mapping."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            _check_merges(node)  # Z54, Z55
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == MERGE:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:  # an unhashable key: SafeLoader refuses it with its own message below
                    continue
                line = key_node.start_mark.line + 1
                if first is not None:
                    raise DuplicateKeyError(key, line, first, key_node.start_mark)
                seen[key] = line
        return super().construct_mapping(node, deep)


class AmbiguousNumberError(yaml.constructor.ConstructorError):
    """A number YAML 1.1 reads otherwise than it looks (PyYAML follows 1.1): a leading zero makes it octal (``017`` is
    15, ``010`` is 8), colons make it base 60 (``1:30`` is 90); a date is no setting's value. ``text`` as written, ``value`` as read, ``line``."""

    def __init__(self, text: str, value: Any, why: str, node_mark):
        self.text, self.value, self.why, self.line = text, value, why, node_mark.line + 1
        super().__init__(None, None, f"{text!r} reads as {value!r} ({why})", node_mark)

    def advice(self) -> str:
        if float_lost(self.text, self.value):  # optim.lr=1.0e-400 was "must be positive, got 0.0" (round 26, P30)
            return f"{self.text!r} {self.why}; {FLOAT_SIZES}"
        if not isinstance(self.value, (int, float)):  # a date
            return f"{self.text!r} reads as a date ({self.why}); no setting takes a date: quote it if it is text"
        if ":" in self.text or self.text.lstrip("+-")[:2].lower() in ("0x", "0o", "0b"):
            return f"{self.text!r} reads as {self.value!r} ({self.why}); quote it if it is text, or write the number"
        sign = "-" if self.text.startswith("-") else ""
        digits = sign + (self.text.lstrip("+-").lstrip("0") or "0")
        return (f"{self.text!r} reads as {self.value!r} ({self.why}); write {digits} without the leading zero, or "
                f"{self.value} if the octal number was meant")


def _checked_number(construct):
    """A SafeLoader number constructor that refuses the YAML 1.1 forms ``AmbiguousNumberError`` names (round 5 of issue
    30: ``seed=017`` trained with seed 15, ``max_steps=1:30`` for 90 steps, without a word)."""
    def checked(loader, node):
        value = construct(loader, node)
        text = str(node.value).replace("_", "")
        bare = text.lstrip("+-")
        if ":" in bare:
            raise AmbiguousNumberError(node.value, value, "YAML 1.1 reads numbers with colons in base 60", node.start_mark)
        if bare[:2].lower() in ("0x", "0o", "0b"):  # optim.lr=0x10 trained at lr 16 (issue 30 round 14, B309)
            raise AmbiguousNumberError(node.value, value, f"YAML reads {bare[:2]}... as a number in base "
                                       f"{ {'x': 16, 'o': 8, 'b': 2}[bare[1].lower()]}", node.start_mark)
        if (lost := float_lost(text, value)) is not None:  # 1.0e-400 reads as 0.0, 1.0e400 as inf
            raise AmbiguousNumberError(node.value, value, lost, node.start_mark)
        if len(bare) > 1 and bare[0] == "0" and bare[1].isdigit() and "." not in bare and "e" not in bare.lower():
            raise AmbiguousNumberError(node.value, value, "YAML 1.1 reads a number with a leading zero as octal",
                                       node.start_mark)
        return value
    return checked


def _checked_bool(loader, node):
    """A SafeLoader boolean constructor that reads YAML 1.1's word booleans (yes/no/on/off) as the words, as YAML 1.2
    does: a switch (``compile: yes``) still reads as true where the config expects one (``config._coerce_bool``), and
    text stays text. Round 8 of issue 30: ``device: on`` was "device: expected a string, got True" and ``dtype: no``
    "False is not one of ...", never naming the word the user wrote."""
    if str(node.value).lower() not in ("true", "false"):
        return str(node.value)
    return yaml.SafeLoader.construct_yaml_bool(loader, node)


class QuotedText(str):
    """Text the YAML put in quotes that would read as a number or a switch without them (``lr: "0.5"``,
    ``max_steps: '3'``, ``compile: "true"``), with the 1-based ``line`` it is on (None where no line means anything:
    an override). A quoted number is text in YAML; the config's number and switch settings refuse it rather than
    convert it (issue 30 round 16, C135: ``optim: {lr: "0.5"}`` trained at lr 0.5 and config.yaml recorded 0.5
    unquoted, while a grid refused ``seeds: [0, "0"]``). Text settings take it as the text it is."""

    line: int | None

    def __new__(cls, text: str, line: int | None = None):
        self = super().__new__(cls, text)
        self.line = line
        return self

    def __reduce__(self):  # copy.deepcopy and pickle keep the kind and the line
        return (QuotedText, (str(self), self.line))

    def where(self) -> str:
        """" (line N)" where the line is known, else ""."""
        return f" (line {self.line})" if self.line else ""


def _quoted_text(loader, node):
    """A SafeLoader string constructor that marks a quoted scalar reading otherwise without its quotes
    (``QuotedText``)."""
    value = yaml.SafeLoader.construct_yaml_str(loader, node)
    if node.style in ("'", '"') and (loader.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str"
                                     or _reads_as_float(value)):  # "1e-3": YAML 1.1 leaves it text, the config not
        return QuotedText(value, node.start_mark.line + 1)
    return value


def as_text_in_quotes(value: Any) -> Any:
    """``value`` (settings given as Python objects: dicts, lists, scalars) with each ``str`` that YAML would read as a
    number or a switch without quotes marked ``QuotedText``: a Python string is text, as a quoted YAML scalar is.
    ``load_grid(d)`` with ``d['sizes']['a']['hidden_size'] = '32'`` trained hidden size 32 without a word, while the
    same grid written as a file with ``hidden_size: "32"`` is refused (issue 30 round 23, U226). Keys are kept as they
    are; text YAML 1.1 leaves as text unquoted (``1e-3``) is not marked, as an unquoted scalar in a file is not."""
    if isinstance(value, dict):
        return {key: as_text_in_quotes(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_text_in_quotes(item) for item in value)
    if type(value) is str and yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, (True, False)) != \
            "tag:yaml.org,2002:str":
        return QuotedText(value)
    return value


def _reads_as_float(text: str) -> bool:
    try:
        float(text.replace("_", ""))
    except ValueError:
        return False
    return True


def _refused_timestamp(loader, node):
    """No setting is a date: ``seed: 2024-01-01`` was "expected an integer, got datetime.date(2024, 1, 1)" (round 8)."""
    value = yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    raise AmbiguousNumberError(node.value, value, "YAML reads a date or a time as a timestamp", node.start_mark)


StrictLoader.add_constructor("tag:yaml.org,2002:bool", _checked_bool)
StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", _refused_timestamp)
StrictLoader.add_constructor("tag:yaml.org,2002:str", _quoted_text)
yaml.SafeDumper.add_representer(QuotedText, yaml.SafeDumper.represent_str)  # written back as the text it is
StrictLoader.add_constructor("tag:yaml.org,2002:int", _checked_number(yaml.SafeLoader.construct_yaml_int))
StrictLoader.add_constructor("tag:yaml.org,2002:float", _checked_number(yaml.SafeLoader.construct_yaml_float))


class TooDeepError(yaml.YAMLError):
    """The text nests mappings or lists more deeply than PyYAML's recursive reader can follow (a few hundred levels,
    Python's recursion limit): a ``RecursionError`` traceback before (issue 30 round 6: a config nested 3,000
    levels)."""

    def __str__(self) -> str:
        return "its mappings or lists are nested too deeply to read (hundreds of levels)"


class TooManyValuesError(yaml.YAMLError):
    """The text's aliases expand to more than ``MAX_VALUES`` values: nine anchored lists of ten aliases each (600 bytes)
    are 10^9 strings, which PyYAML shares by reference but every later reader (a check, an error line quoting the
    value) walks whole: `train --config` and `sweep --grid` ran on with no output until killed (issue 30 round 28,
    T36). Anchors used as configs use them (a shared body, ``<<: *body``) stay far below the limit."""

    def __init__(self, count: int):
        self.count = count

    def __str__(self) -> str:
        return (f"its anchors and aliases expand to more than {MAX_VALUES:,} values (at least {self.count:,}: an alias "
                f"of an alias of ...)")


MAX_VALUES = 1_000_000  # a config holds hundreds; a grid thousands


class AliasLoopError(yaml.YAMLError):
    """A list or mapping holds itself through an alias (``a: &x [*x]``): PyYAML builds a value that contains itself,
    which no setting is, and the count of its values recursed until Python's limit, named as "nested too deeply
    (hundreds of levels)" for a file two lines long (issue 30 round 30, X114)."""

    def __str__(self) -> str:
        return ("a list or mapping holds itself through an alias (an alias such as *x inside the value its anchor &x "
                "names: a loop, which no setting can be)")


def parse(text: str) -> Any:
    """The value of YAML ``text`` read by ``StrictLoader`` (raises ``DuplicateKeyError``, ``TooDeepError``,
    ``TooManyValuesError`` or another ``yaml.YAMLError``)."""
    try:
        value = yaml.load(text, Loader=StrictLoader)  # noqa: S506 - StrictLoader is a SafeLoader
        if (count := _expanded_size(value, {})) > MAX_VALUES:  # raises AliasLoopError for a loop (X114)
            raise TooManyValuesError(count)
        return value
    except RecursionError:
        raise TooDeepError() from None


_OPEN = -1  # ``_expanded_size``'s mark of a value whose count is being taken


def _expanded_size(value: Any, memo: dict[int, int]) -> int:
    """How many values ``value`` holds when every shared (aliased) list or mapping is counted at each place it is used;
    linear in the distinct objects (``memo`` by id), so a bomb is measured without being walked. A value met again
    while its own count is open (``_OPEN``) holds itself: ``AliasLoopError`` (issue 30 round 30, X114)."""
    if not isinstance(value, (list, dict)):
        return 1
    if (known := memo.get(id(value))) is not None:
        if known == _OPEN:
            raise AliasLoopError()
        return known
    memo[id(value)] = _OPEN
    parts = [*value.keys(), *value.values()] if isinstance(value, dict) else value
    memo[id(value)] = total = 1 + sum(_expanded_size(part, memo) for part in parts)
    return total


def load_strict(text: str, source: str) -> Any:
    """The value of YAML ``text`` (``source`` names it in errors): a ``ConfigError`` for a repeated key or bad YAML,
    and for ``text`` that is not text (``load_strict(5, ...)`` was PyYAML's raw AttributeError, issue 30 round 26,
    Q635)."""
    if not isinstance(text, str):
        raise ConfigError(f"{source}: expected the YAML text as a str, got {type(text).__name__} {text!r:.40}; pass "
                          f"the file's text (Path(...).read_text())")
    try:
        return parse(text)
    except DuplicateKeyError as e:
        raise ConfigError(f"{source} line {e.line}: key {e.key!r} is given twice{e.how} (first on line {e.first}), "
                          f"and only one value can hold; delete one of them") from None
    except AmbiguousNumberError as e:
        raise ConfigError(f"{source} line {e.line}: {e.advice()}") from None
    except TooDeepError as e:
        raise ConfigError(f"{source}: {e}; a setting needs a few levels at most, so write it flatter") from None
    except TooManyValuesError as e:
        raise ConfigError(f"{source}: {e}; a config needs far fewer, so write the values out or alias less") from None
    except AliasLoopError as e:  # was named as depth (round 30, X114)
        raise ConfigError(f"{source}: {e}; write the value out, or move the alias out of its anchor's value") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{source} is not valid YAML ({' '.join(str(e).split())}); correct it where named") from None

