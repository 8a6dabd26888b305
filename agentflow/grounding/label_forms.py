"""A learned label however a document spaces or delimits it.

A learned locator's label (``agentflow.grounding.locator_rule.Locator.left``
of a rule at a line's start) is the text its examples write before the
value: a key, a separator (``:`` or ``=``), and perhaps the opener the value
is delimited with (``title = {``, ``name = "``, ``version: '``). Formats
let the whitespace around the separator vary (``title={``, ``title = {``,
an aligned ``name        = "x"``), and many delimit a value with any of a
family of openers (BibTeX's ``{...}`` or ``"..."``; YAML's and TOML's
``'...'`` or ``"..."``). A label is the same label written with any
whitespace (none included) around its separator and between it and its
opener (``label_at``), and, where the rule ends the value at the opener's
closer (its ``right`` begins with it: ``},`` after ``{``), with another
opener of the family, its ``right`` then beginning with that opener's
closer (``right_for``): a brace's family is the brace and both quotes (a
format that delimits a value with braces as text delimits it with quotes
too), a quote's family both quotes (never a brace: ``version = {
workspace = true }`` is a table, not a string). The value's end is never
loosened: only the closer that matches the document's opener ends it.
A label whose examples write a space before its ``=`` and a bare value
(``name = ``, as INI, ``setup.cfg`` and Java properties files do) is also
written with ``:`` (``name: quux``, ``name : quux``; never ``::``): those
formats read both separators alike (Python's ``configparser``,
``java.util.Properties``). Not a label written ``NAME=`` (os-release,
systemd, ``.desktop``, shell: ``:`` is no separator there), nor one with an
opener (``title = {``, ``name = "``: BibTeX, TOML), nor one written with
``:`` (deb822, e-mail, YAML: ``name = x`` is a plain string there).

A markup element's start tag is a label of its own kind (``tag_label``):
where the examples write a value as an element's whole content (``<title>x
</title>``), a CDATA wrapper around it (``<title><![CDATA[x]]></title>``)
is no part of the label (the rule reads the value out of it: ``agentflow.
grounding.escapes.unwrap_cdata``), nor is an attribute the examples do not
all write alike (``<title type="html">`` beside ``<title>``): the label is
the element's name with the attributes every example writes the same
(``<string name="app_name">``: there the attribute is the key). It matches
a start tag of that element that writes at least those attributes, in any
order, whatever else it writes (``label_at``).

Labels without a separator (``Port ``, ``Subsystem sftp ``, ``@article{``)
are matched as written (letter case ignored), but for their blanks: a run of
blanks in one is any run of spaces and tabs (``Subsystem\\tsftp\\t``,
CentOS's aligned ``Subsystem       sftp    internal-sftp``, nginx's
``listen\\t80;``), and a word followed by blanks, the label's first or its
last, may be followed by a separator the examples do not write instead
(``Port = 2222``, ``PermitRootLogin=no``, ``Subsystem = sftp x``: sshd_config's
optional ``=``; ``Port: 22``), the value read after it, never ``= 2222``. A
``:`` separates only before a blank and ``=`` not before ``=`` or ``>``:
``ListenAddress ::1``, ``:memory:``, ``== x`` are values. The key's own
text is matched as written (letter case ignored). ``same_label`` says
whether the examples' texts before their values are one label written in
these ways, and ``agreed`` gives the label and the texts after the values
as one form (each after's closer the label's), so a rule is learned from
examples that space or delimit it differently.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["CLOSER", "agreed", "bare_label", "closing_quote", "label_at", "quoted_unit",
           "right_for", "same_label", "start_tag", "tag_label", "tag_within"]

CLOSER = {"{": "}", '"': '"', "'": "'"}
"""Each opener a label may end with and the closer that ends its value."""
_FAMILY = {"{": '{"\'', '"': "\"'", "'": "'\""}
"""The openers a label's opener stands for (its own first)."""
_LABEL = re.compile(r"(?P<key>.*?[\w\])\"'])(?P<sep>[ \t]*[:=][ \t]*)"
                    r"(?:(?P<brk>[(\[])[ \t]*(?=[{\"']))?(?P<open>[{\"'][ \t]*)?\Z", re.DOTALL)
"""A label with a separator: a key ending with a word character (or a
bracket, ``Name[de]=``; a quote, ``"name": ``), ``:`` or ``=`` with
whitespace around it, and an opener, perhaps after the bracket of an array
(``license=('``, ``"files": ["``)."""


_START_TAG = re.compile(r"<(?P<name>[A-Za-z_][\w.:-]*)"
                        r"(?P<attrs>(?:[ \t]+[A-Za-z_][\w.:-]*[ \t]*=[ \t]*"
                        r"(?:\"[^\"]*\"|'[^']*'))*)[ \t]*>")
"""A markup element's start tag (not an empty element's): its name, its attributes."""
_TAG_ATTRIBUTE = re.compile(r"([A-Za-z_][\w.:-]*)[ \t]*=[ \t]*(?:\"([^\"]*)\"|'([^']*)')")
_CDATA_OPEN = "<![CDATA["


def start_tag(text: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """``text`` as a start tag that is all of it (``<title type="html">``):
    its element name and its attributes (name, value), in order; else ``None``."""
    match = _START_TAG.fullmatch(text)
    if match is None:
        return None
    return match["name"], tuple((a[1], a[2] if a[2] is not None else a[3])
                                for a in _TAG_ATTRIBUTE.finditer(match["attrs"]))


def _written(name: str, attributes: Sequence[tuple[str, str]]) -> str:
    return "<" + name + "".join(f' {a}="{v}"' for a, v in attributes) + ">"


def tag_label(befores: Sequence[str], afters: Sequence[str]) -> tuple[str, list[str]] | None:
    """Where each of ``befores`` (the examples' texts before their values, from
    their lines' content) is a start tag of one element, perhaps followed by a
    CDATA opener, and each of ``afters`` begins with that element's end tag
    (after the CDATA closer where the opener is written), and the befores
    differ or one writes a CDATA opener: the element's label (its name and
    the attributes every example writes the same, see the module docstring)
    and the afters less the CDATA closer; else ``None``."""
    tags, out, wrapped = [], [], False
    for before, after in zip(befores, afters, strict=True):
        cdata = before.endswith(_CDATA_OPEN)
        tag = start_tag(before[:-len(_CDATA_OPEN)] if cdata else before)
        if cdata:
            if not after.startswith("]]>"):
                return None
            after, wrapped = after[3:], True
        if tag is None or re.match(rf"</{re.escape(tag[0])}[ \t]*>", after) is None:
            return None
        tags.append(tag)
        out.append(after)
    if not tags or len({name for name, _ in tags}) > 1 or (len(set(befores)) == 1 and not wrapped):
        return None
    shared = [a for a in tags[0][1] if all(a in attributes for _, attributes in tags)]
    return _written(tags[0][0], shared), out


def tag_within(label: str, other: str) -> bool:
    """Whether ``other`` is a start tag of ``label``'s element (both start tags)
    writing at least ``label``'s attributes (``label_at`` reads ``other``'s
    lines after ``label``)."""
    mine, theirs = start_tag(label), start_tag(other)
    return mine is not None and theirs is not None and mine[0].casefold() == theirs[
        0].casefold() and set(mine[1]) <= set(theirs[1])


def _parts(label: str) -> tuple[str, str, str] | None:
    """``label`` as its key, separator (``:`` or ``=``, no whitespace, after
    it the bracket of an array the opener is inside: ``=(``) and opener
    (``""``: none); ``None`` for a label without a separator."""
    match = _LABEL.match(label)
    if match is None:
        return None
    return match["key"], match["sep"].strip() + (match["brk"] or ""), (
        match["open"] or "").strip()


_GAP = re.compile(r"[ \t]+")
_BARE_SEPARATOR = r"[ \t]*(?:=(?![=>])|:(?=[ \t]))[ \t]*"
"""A separator a bare label's examples do not write (``Port = 2222``,
``PermitRootLogin=no``, ``Port: 22`` for ``Port ``): ``=`` (not ``==``,
``=>``), or ``:`` before a blank (never ``::1`` nor ``:memory:``)."""


def bare_label(label: str) -> bool:
    """Whether ``label`` (a rule's ``left``, leading whitespace less) is a
    label without a separator (``Port ``, ``Subsystem sftp ``, ``@article{``)."""
    return _parts(label) is None


def _bare_pattern(label: str) -> re.Pattern[str] | None:
    """The pattern of a label without a separator (``bare_label``) as
    ``label_at`` matches it: each run of blanks in it any run of spaces and
    tabs (``Subsystem\\tsftp\\t``, an aligned ``Subsystem       sftp ``), and
    one of them, after the label's first word or at its end where a word
    ends there, also a separator (``_BARE_SEPARATOR``: sshd_config's
    optional ``=``, ``Subsystem=sftp x``); ``None`` for a label without
    blanks (matched as written)."""
    pieces = _GAP.split(label)
    if len(pieces) == 1:
        return None
    words = [re.escape(p) for p in pieces]
    places = {k for k in (0, len(pieces) - 2)
              if re.search(r"\w\Z", pieces[k]) and (k == 0 or not pieces[k + 1])}
    forms = ["[ \t]+".join(words)]
    for k in sorted(places):
        gaps = ["[ \t]+"] * (len(pieces) - 1)
        gaps[k] = f"(?:{_BARE_SEPARATOR})"
        forms.append("".join(w + g for w, g in zip(words, [*gaps, ""], strict=True)))
    return re.compile("|".join(f"(?:{f})" for f in reversed(forms)), re.IGNORECASE)  # a
    # separator first: ``Port = 2222`` is ``Port`` and ``2222``


@functools.lru_cache(maxsize=512)
def _pattern(label: str, right: str) -> re.Pattern[str] | None:
    """The pattern of ``label`` (leading whitespace less) as ``label_at``
    matches it; ``None`` for a label matched as written."""
    parts = _parts(label)
    if parts is None:
        return _bare_pattern(label)
    key, sep, opener = parts
    openers = opener
    if opener and right.startswith(CLOSER[opener]):
        openers = _FAMILY[opener]
    tail = f"[ \t]*(?P<open>[{re.escape(openers)}])" if openers else ""
    mark = "[ \t]*".join(re.escape(c) for c in sep)  # ``=`` and an array's bracket
    if sep == "=" and not opener and label[len(key):][:1] in " \t":
        mark = "(?:=|:(?!:))"  # ``name = ``, as INI and properties files write it: ``name: ``
        # too (never ``License :: OSI Approved``, a classifier's ``::``)
    return re.compile(f"{re.escape(key)}[ \t]*{mark}{tail}[ \t]*", re.IGNORECASE)


def label_at(body: str, label: str, right: str = "") -> tuple[int, str] | None:
    """Where ``label`` (a rule's ``left``, leading whitespace less) written at
    the start of ``body`` (a line less its indentation) ends, and the opener
    written there (``""``: none, or the label's own); ``None`` where ``body``
    does not begin with it. Letter case is ignored; whitespace around the
    separator and before the opener may differ, and the opener may be another
    of its family where the value ends at its closer (``right``: see the
    module docstring). A start tag label (``<title>``) is written by a start
    tag of its element that writes at least its attributes (``tag_label``)."""
    if (tag := start_tag(label)) is not None:
        found = _START_TAG.match(body)
        if found is None or found["name"].casefold() != tag[0].casefold():
            return None
        written = start_tag(found.group())
        return (found.end(), "") if written is not None and set(tag[1]) <= set(
            written[1]) else None
    pattern = _pattern(label, right)
    if pattern is None:
        return (len(label), "") if body[:len(label)].casefold() == label.casefold() else None
    match = pattern.match(body)
    if match is None:
        return None
    return match.end(), match.groupdict().get("open") or ""


def right_for(label: str, right: str, opener: str) -> str:
    """``right`` where the document opens the value with ``opener`` (``label_at``):
    its leading closer that opener's (``",`` for ``},`` after ``"``)."""
    own = _parts(label)
    if own is None or not own[2] or not opener or opener == own[2]:
        return right
    return CLOSER[opener] + right[len(CLOSER[own[2]]):]


def closing_quote(label: str, right: str) -> str:
    """``right`` as the end of a quoted value: its closing quote alone where
    ``label`` ends with a quote (``"license": "``, ``pkgdesc="``) and ``right``
    begins with it (``",``), else ``right`` as it is. A quoted string is a unit
    that ends at its closing quote (an escaped one closes nothing:
    ``agentflow.grounding.quotes.past_escaped``); what the examples write after
    it (``,`` before the next key, ``)`` of a one-item array) is the format's
    layout, which a document writes otherwise (a JSON object's last key has no
    ``,``). A brace is no such unit (``{a {b} c}`` nests)."""
    parts = _parts(label.lstrip())
    if parts is None or parts[2] not in "\"'" or not parts[2] or not right.startswith(parts[2]):
        return right
    return parts[2]


def quoted_unit(label: str, right: str) -> bool:
    """Whether a value read after ``label`` up to ``right`` is one quoted
    string: the label ends with a quote and ``right`` is that quote alone
    (``closing_quote``: ``"description": "`` up to ``"``). The quotes are its
    bounds: whatever the string holds (a bracketed note, several words, a
    ``#``) is the value's own, never text read past it."""
    parts = _parts(label.lstrip())
    return parts is not None and bool(parts[2]) and parts[2] in "\"'" and right == parts[2]


def same_label(befores: Sequence[str]) -> bool:
    """Whether ``befores`` (the examples' texts before their values, from
    their lines' content) are one label written with other whitespace
    around its separator, another letter case or another opener
    (``_FAMILY``): ``title={``, ``Title = "``."""
    forms = {_form(b) for b in befores}
    return len(forms) == 1 and None not in forms


def _form(label: str) -> tuple[str, str, bool] | None:
    parts = _parts(label)
    return None if parts is None else (parts[0].casefold(), parts[1], bool(parts[2]))


def agreed(befores: Sequence[str], afters: Sequence[str]) -> tuple[str, list[str]] | None:
    """The label the examples' ``befores`` write (``same_label``) and their
    ``afters`` (the texts after the values) as that label's opener closes
    them: the first's label, its opener a brace where any example's is (the
    brace's family holds the quotes); ``None`` where an after does not begin
    with its own opener's closer (the opener would end nothing)."""
    parts = [_parts(b) for b in befores]
    openers = [p[2] for p in parts if p is not None]
    if len(openers) != len(befores):
        return None
    own = "{" if "{" in openers else openers[0]
    if own and any(o not in _FAMILY[own] for o in openers):
        return None
    label = befores[0]
    first = parts[0]
    if first is not None and first[2] != own:
        cut = label.rstrip(" \t")
        label = cut[:-1] + own + label[len(cut):]
    out = []
    for opener, after in zip(openers, afters, strict=True):
        if opener != own:
            if not after.startswith(CLOSER[opener]):
                return None
            after = CLOSER[own] + after[len(CLOSER[opener]):]
        out.append(after)
    return label, out
