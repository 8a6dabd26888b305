"""Independent truth parsers for the generalisation benchmark.

None of this uses agentflow: each parser reads a document the way its own
format defines it, and returns ``{field: str | None | list[str]}`` under the
field names of the kind's schema. Whitespace inside a value is kept as the
format gives it; the scorer folds it (``scoring.fold``).

* ``parse_stanza``: a Debian control-file paragraph (deb822: ``Key: value``
  lines, continuation lines start with a space or tab), used for
  ``/var/lib/dpkg/status`` entries and DEP-5 ``copyright`` files.
* ``parse_unit``: a systemd unit file (``[Section]`` headers, ``Key=Value``
  lines, ``#``/``;`` comments, a trailing backslash continues a line, a key
  may repeat and an empty assignment resets a list), per systemd.syntax(7).
* Python core metadata (``METADATA``/``PKG-INFO``) is read with the standard
  library's ``email.parser.HeaderParser`` (the format is RFC 822 headers).
* ``man_truth``: the head of a man page's roff source (groff_man(7): the
  ``.TH title section date source manual`` request, arguments quoted per
  groff(7), and the ``NAME`` section's ``name \\- summary`` line).
"""

from __future__ import annotations

import re
from email.parser import HeaderParser
from typing import Any

Truth = dict[str, Any]

__all__ = ["Truth", "copyright_truth", "dpkg_truth", "man_head", "man_truth", "metadata_truth",
           "parse_stanza", "parse_unit", "split_stanzas", "unit_truth"]


def split_stanzas(text: str) -> list[str]:
    """The paragraphs of a deb822 file (separated by blank or whitespace-only lines),
    each without its trailing newline; empty paragraphs dropped."""
    stanzas, current = [], []
    for line in text.splitlines():
        if line.strip():
            current.append(line)
        elif current:
            stanzas.append("\n".join(current))
            current = []
    if current:
        stanzas.append("\n".join(current))
    return stanzas


def parse_stanza(stanza: str) -> dict[str, str]:
    """One deb822 paragraph as ``{Key: value}``: the value is the text after
    ``Key:`` (stripped) followed by each continuation line (``\\n`` + the line,
    its leading whitespace stripped). Keys keep their case; ``#`` comment lines
    are skipped. A later duplicate key replaces an earlier one."""
    fields: dict[str, str] = {}
    key: str | None = None
    for line in stanza.splitlines():
        if line.startswith("#"):
            continue
        if line[:1] in (" ", "\t"):
            if key is not None:
                fields[key] += "\n" + line.strip()
            continue
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip()
        fields[key] = value.strip()
    return fields


def _first_line(value: str | None) -> str | None:
    if value is None:
        return None
    line = value.split("\n", 1)[0].strip()
    return line or None


def _commas(value: str | None) -> list[str]:
    """A deb822 comma list (Depends): the items, whitespace-folded, empty ones dropped."""
    if not value:
        return []
    return [" ".join(item.split()) for item in value.split(",") if item.strip()]


def dpkg_truth(stanza: str) -> Truth:
    """The ``dpkg_status.Package`` fields of one ``/var/lib/dpkg/status`` paragraph:
    package, version, maintainer and homepage as written (``None`` when absent),
    summary = the first line of ``Description``, depends = ``Depends`` split at commas."""
    f = parse_stanza(stanza)
    return {
        "package": f.get("Package"),
        "version": f.get("Version"),
        "maintainer": f.get("Maintainer"),
        "homepage": f.get("Homepage"),
        "summary": _first_line(f.get("Description")),
        "depends": _commas(f.get("Depends")),
    }


def copyright_truth(text: str) -> Truth:
    """The ``dep5_copyright.CopyrightFile`` fields of a DEP-5 ``copyright`` file:
    upstream_name, upstream_contact and source from the header paragraph;
    license = the first line (the short name) of ``License`` in the first
    ``Files`` paragraph whose patterns include ``*``, and copyright = the lines of its ``Copyright``
    field (each stripped; empty lines and ``.`` dropped); ``None``/``[]`` when absent."""
    stanzas = [parse_stanza(s) for s in split_stanzas(text)]
    header = stanzas[0] if stanzas else {}
    files = next((s for s in stanzas[1:] if "*" in s.get("Files", "").split()), {})
    holders = [line.strip() for line in files.get("Copyright", "").split("\n")]
    return {
        "upstream_name": header.get("Upstream-Name") or None,
        "upstream_contact": header.get("Upstream-Contact") or None,
        "source": header.get("Source") or None,
        "license": _first_line(files.get("License")),
        "copyright": [h for h in holders if h and h != "."],
    }


def metadata_header(text: str) -> str:
    """The header block of a core-metadata file (before the first blank line):
    the part of a ``METADATA`` file the benchmark sends (the body is the long
    description)."""
    return re.split(r"\n[ \t]*\n", text, maxsplit=1)[0].rstrip("\n")


def metadata_truth(text: str) -> Truth:
    """The ``python_metadata.Distribution`` fields of a core-metadata header block:
    name, version, summary, author_email and requires_python as written
    (``None`` when absent or empty), requires_dist = every ``Requires-Dist`` value."""
    msg = HeaderParser().parsestr(metadata_header(text) + "\n\n")

    def one(key: str) -> str | None:
        value = msg.get(key)
        return " ".join(str(value).split()) or None if value is not None else None

    return {
        "name": one("Name"),
        "version": one("Version"),
        "summary": one("Summary"),
        "author_email": one("Author-email"),
        "requires_python": one("Requires-Python"),
        "requires_dist": [" ".join(str(v).split()) for v in msg.get_all("Requires-Dist") or []],
    }


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """A systemd unit file as ``{section: {key: [values in order]}}``
    (systemd.syntax(7)): ``#``/``;`` lines are comments, a line ending in a
    backslash continues on the next (joined with a space), an empty
    assignment (``Key=``) clears the values given before it."""
    units: dict[str, dict[str, list[str]]] = {}
    section: dict[str, list[str]] | None = None
    logical: list[str] = []
    lines: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not logical and (not stripped or stripped[0] in "#;"):
            continue
        if logical and stripped[:1] in ("#", ";"):  # a comment inside a continuation
            continue
        if stripped.endswith("\\"):
            logical.append(stripped[:-1].strip())
            continue
        logical.append(stripped)
        lines.append(" ".join(p for p in logical if p))
        logical = []
    if logical:
        lines.append(" ".join(p for p in logical if p))
    for line in lines:
        if line.startswith("[") and line.endswith("]"):
            section = units.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        if not sep or section is None:
            continue
        values = section.setdefault(key.strip(), [])
        if value.strip():
            values.append(value.strip())
        else:
            values.clear()
    return units


def unit_truth(text: str) -> Truth:
    """The ``systemd_unit.Service`` fields of a ``.service`` file: description
    (``[Unit] Description``), documentation and after (every value of
    ``Documentation`` / ``After`` split at whitespace), type and exec_start
    (``[Service] Type`` / the first ``ExecStart``), wanted_by (``[Install]
    WantedBy`` split at whitespace); ``None``/``[]`` when absent. Description
    and Type take their last assignment (systemd's rule for a single value)."""
    unit = parse_unit(text)

    def first(section: str, key: str) -> str | None:
        values = unit.get(section, {}).get(key, [])
        return values[0] if values else None

    def last(section: str, key: str) -> str | None:  # a single-valued setting: the last wins
        values = unit.get(section, {}).get(key, [])
        return values[-1] if values else None

    def words(section: str, key: str) -> list[str]:
        return [w for v in unit.get(section, {}).get(key, []) for w in v.split()]

    return {
        "description": last("Unit", "Description"),
        "documentation": words("Unit", "Documentation"),
        "after": words("Unit", "After"),
        "type": last("Service", "Type"),
        "exec_start": first("Service", "ExecStart"),
        "wanted_by": words("Install", "WantedBy"),
    }


def _roff_args(line: str) -> list[str]:
    """The arguments of a roff request line (``.TH NAME "1" "May 2023"``),
    per groff(7): separated by spaces, a double-quoted argument may hold
    spaces, ``""`` inside one is a literal quote; the request name dropped."""
    args: list[str] = []
    i, n = 0, len(line)
    while i < n and not line[i].isspace():
        i += 1  # the request name (.TH)
    while i < n:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n:
            break
        if line[i] == '"':
            i += 1
            out = []
            while i < n:
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        out.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                out.append(line[i])
                i += 1
            args.append("".join(out))
        else:
            j = i
            while j < n and line[j] not in " \t":
                j += 1
            args.append(line[i:j])
            i = j
    return args


_SH = re.compile(r'^\.SH[ \t]+"?([^"\n]*)"?[ \t]*$')


def man_head(text: str) -> str | None:
    """The head of a man page's roff source that the benchmark sends: from its
    ``.TH`` line up to (not including) its third ``.SH`` line (the title line,
    the NAME section and the section after it); ``None`` without a ``.TH``
    line (an mdoc page or a ``.so`` redirect)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(".TH ")), None)
    if start is None:
        return None
    sections = [i for i in range(start, len(lines)) if _SH.match(lines[i])]
    end = sections[2] if len(sections) > 2 else len(lines)
    return "\n".join(lines[start:end])


def man_truth(text: str) -> Truth:
    """The ``man_page.ManPage`` fields of a man page head: title, section,
    date, source and manual = the five arguments of ``.TH`` in order
    (``None`` when absent or empty, as written: roff escapes kept);
    summary = the NAME section's text after its `` \\- `` (its text lines
    joined by spaces, request lines skipped; ``None`` without one: a
    ``\\-`` inside a word is a hyphen, not the separator)."""
    lines = text.splitlines()
    th = next((line for line in lines if line.startswith(".TH ")), None)
    args = _roff_args(th) if th is not None else []
    args += [""] * (5 - len(args))
    summary = None
    names = [i for i, line in enumerate(lines) if (m := _SH.match(line))
             and m.group(1).strip().upper() == "NAME"]
    if names:
        body = []
        for line in lines[names[0] + 1:]:
            if _SH.match(line):
                break
            if line.startswith((".", "'")):
                continue
            body.append(line.strip())
        joined = " ".join(b for b in body if b)
        parts = re.split(r"\s\\-\s", joined, maxsplit=1)  # "name \- summary"; a
        if len(parts) == 2:  # hyphen inside a name (workload\-identity) is no separator
            summary = parts[1].strip() or None
    return {
        "title": args[0] or None,
        "section": args[1] or None,
        "date": args[2] or None,
        "source": args[3] or None,
        "manual": args[4] or None,
        "summary": summary,
    }
