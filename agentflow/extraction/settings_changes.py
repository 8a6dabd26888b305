"""Whether records were made the same way, from their ``"settings"``
(``agentflow.extraction.settings_fingerprint`` and
``agentflow.extraction.run_settings``), and what differs, in words.

    setting_changes({"model": "vendor:a", "passes": "2"}, {"model": "vendor:b"})
    # [SettingChange("model", "vendor:a", "vendor:b"), SettingChange("passes", "2", "1")]

The rules, one per kind of key:

* The run's settings (``RUN_SETTINGS``: model, endpoint, instructions,
  passes...): compared when both sides carry ``model``, an absent key meaning
  its default (``RUN_DEFAULTS``). A side without ``model`` was written before
  agentflow recorded the run's settings: what it was made with is unknown, and
  its run settings are not compared (``knows_the_run``; ``agentflow extract``
  says so on stderr).
* ``INSTRUCTIONS``, ``PASSES``, ``MAX_CHARS``, ``CHUNKING``: digests of the
  schema module's values, written before the run's settings took them over
  (``LEGACY``); compared only between two records that carry no run settings.
* Every other key (the schema module's ``EXAMPLES``, ``prepare``, the fields'
  markers): compared as they are, an absent key meaning not set.

Records without ``"settings"`` at all (written before agentflow kept them) are
not compared: callers skip them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentflow.extraction.run_settings import MODEL, RUN_DEFAULTS, RUN_SETTINGS
from agentflow.extraction.settings_fingerprint import MARKERS

__all__ = ["LEGACY", "SettingChange", "knows_the_run", "setting_changes", "unlike_settings",
           "words"]

LEGACY = frozenset({"INSTRUCTIONS", "PASSES", "MAX_CHARS", "CHUNKING"})
"""Schema-module keys that records made before the run's settings carried."""


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One setting that differs: its key, and its value on each side (a run
    setting's value, or a module digest; ``None``: not set)."""

    key: str
    held: str | None
    now: str | None

    def words(self, held_as: str = "in its records", now_as: str = "in this run") -> str:
        """The change in words: ``"--passes (or the schema module's PASSES): 1 in
        its records, 2 in this run"``; a module setting without values
        (``"the schema module's EXAMPLES changed"``), its digests are no help."""
        if self.key in RUN_SETTINGS:
            held, now = _shown(self.key, self.held), _shown(self.key, self.now)
            return f"{RUN_SETTINGS[self.key]}: {held} {held_as}, {now} {now_as}"
        what = ("the fields' Grounded()/Derived() markers" if self.key == MARKERS
                else f"the schema module's {self.key}")
        if self.held is None or self.now is None:
            return (f"{what} (not set {held_as}, set {now_as})" if self.held is None
                    else f"{what} (set {held_as}, not set {now_as})")
        return f"{what} changed"


def _shown(key: str, value: str | None) -> str:
    shown = value if value is not None else "none"
    return f"text {shown}" if key == "instructions" and value is not None else shown


def knows_the_run(settings: Mapping[str, str]) -> bool:
    """Whether ``settings`` carry the run's settings (model, flags), not only
    the schema module's: records written since agentflow records them."""
    return MODEL in settings


def setting_changes(held: Mapping[str, str], now: Mapping[str, str]) -> list[SettingChange]:
    """What differs between the settings ``held`` (records') and ``now`` (this
    run's, or other records'), by the rules of the module docstring; sorted:
    the run's settings in ``RUN_SETTINGS`` order first, then the module's."""
    run = knows_the_run(held) and knows_the_run(now)
    legacy = not knows_the_run(held) and not knows_the_run(now)
    changes = []
    for key in RUN_SETTINGS if run else ():
        was, is_ = held.get(key, RUN_DEFAULTS.get(key)), now.get(key, RUN_DEFAULTS.get(key))
        if was != is_:
            changes.append(SettingChange(key, was, is_))
    for key in sorted((set(held) | set(now)) - set(RUN_SETTINGS)):
        if key in LEGACY and not legacy:
            continue
        if held.get(key) != now.get(key):
            changes.append(SettingChange(key, held.get(key), now.get(key)))
    return changes


def unlike_settings(held: Iterable[tuple[dict[str, str], int]], now: Mapping[str, str]
                    ) -> list[tuple[dict[str, str], int]]:
    """The settings among ``held`` (each with its record count, as
    ``agentflow.extraction.outfile.count_settings`` gathers them) that differ
    from ``now``."""
    return [(settings, n) for settings, n in held if setting_changes(settings, now)]


def words(pairs: Iterable[tuple[Mapping[str, str], Mapping[str, str]]],
          held_as: str = "in its records", now_as: str = "in this run") -> list[str]:
    """Every change between each ``(held, now)`` pair, in words, each once."""
    out: list[str] = []
    for held, now in pairs:
        out += [w for c in setting_changes(held, now)
                if (w := c.words(held_as, now_as)) not in out]
    return out
