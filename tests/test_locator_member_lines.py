"""A JSON member and a markup element are keys, however the document lays
them out (newcomer24 probe, npm ``package.json`` and ``.csproj`` kinds).
Every field of every document was flagged, 42 right npm values and every
csproj value among them: one example filling ``"main": "index.js"`` or
``<AssemblyName>x</AssemblyName>`` taught no rule (only ``Key: `` or ``key
= `` counted as a key), a minified example (``{"version":"0.2.0","name":
"@acme/tiny",...}``) left only ``"`` before each value in common with a
pretty one, and a minified or one-line document had no label at a line's
start to read. Where one example writes a value under two elements
(``<AssemblyName>`` and ``<RootNamespace>`` alike), the field's own name
tells which is its place."""

from __future__ import annotations

import json

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.member_lines import laid_out
from agentflow.output.examples import check_examples
from tests.locator_support import learned_rules, scored


class Package(BaseModel):
    name: str | None = None
    version: str | None = None
    main: str | None = None


PRETTY = ('{\n  "name": "left-pad-plus",\n  "version": "3.0.1",\n  "main": "index.js",\n'
          '  "dependencies": {\n    "ms": "^2.1.3"\n  }\n}\n')
MINIFIED = '{"version":"0.2.0","name":"@acme/tiny","license":"ISC","files":[],"bin":{}}'
PACKAGES = [Example(PRETTY, Package(name="left-pad-plus", version="3.0.1", main="index.js")),
            Example(MINIFIED, Package(name="@acme/tiny", version="0.2.0"))]


def test_a_minified_json_document_is_read_one_member_a_line() -> None:
    doc = '{"a":"x, \\"y\\" [1]","b":{"c":[1,2]},"d":[],"e":{}}'
    out = laid_out(doc)
    assert out.splitlines() == ['{', '  "a":"x, \\"y\\" [1]",', '  "b":{', '    "c":[',
                                '      1,', '      2', '    ]', '  },', '  "d":[],', '  "e":{}',
                                '}']
    assert json.loads(out) == json.loads(doc) and laid_out(out) == out
    assert laid_out(PRETTY) == PRETTY  # one member a line already
    assert laid_out('{"a": 1,}') == '{"a": 1,}'  # no JSON: as written
    assert laid_out("Name: x, y [1]") == "Name: x, y [1]"


def test_a_one_line_markup_document_is_read_one_element_a_line() -> None:
    doc = ('<Project><PropertyGroup><OutputType>Exe</OutputType><Empty></Empty>'
           '<Title><![CDATA[a<b>c]]></Title></PropertyGroup><!-- x --></Project>')
    assert laid_out(doc).splitlines() == [
        "<Project>", "  <PropertyGroup>", "    <OutputType>Exe</OutputType>",
        "    <Empty></Empty>", "    <Title><![CDATA[a<b>c]]></Title>", "  </PropertyGroup>",
        "  <!-- x -->", "</Project>"]
    assert laid_out(laid_out(doc)) == laid_out(doc)
    html = "<html><body><p>a</p><p>b</p></body></html>"
    assert laid_out(html) == html  # inline elements run on in a sentence


def test_one_example_teaches_a_rule_after_a_quoted_key() -> None:
    rules = learned_rules(PACKAGES, Package)
    assert rules["main"].left == '"main": "'  # only the first example fills it
    lines = learned_lines(rules, check_examples(PACKAGES, Package), Package)
    assert any(line.startswith("learned: main:") for line in lines)
    doc = '{\n  "name": "x",\n  "main": "lib/index.js"\n}\n'
    assert scored(Package(main="lib/index.js"), doc, rules, "main") == HELD


def test_a_pretty_and_a_minified_example_teach_one_rule() -> None:
    rules = learned_rules(PACKAGES, Package)
    for name in ("name", "version"):
        assert rules[name].left == f'"{name}": "'
    doc = ('{"config":{"name":"palette","version":"9.9.9"},"name":"color-mix",'
           '"version":"4.0.0","main":"dist/mix.cjs"}')
    assert rules["name"].values(doc) == ["color-mix"]  # the top-level member, not config's
    assert scored(Package(name="color-mix"), doc, rules, "name") == HELD
    assert scored(Package(name="palette"), doc, rules, "name") < REVIEW_BELOW
    assert scored(Package(version="4.0.0"), doc, rules, "version") == HELD
    assert scored(Package(main="dist/mix.cjs"), doc, rules, "main") == HELD


class Project(BaseModel):
    assembly_name: str | None = None
    root_namespace: str | None = None
    output_type: str | None = None


def csproj(props: str) -> str:
    return (f'<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n{props}'
            "  </PropertyGroup>\n</Project>\n")


def prop(tag: str, value: str) -> str:
    return f"    <{tag}>{value}</{tag}>\n"


PROJECTS = [
    Example(csproj(prop("OutputType", "Exe") + prop("AssemblyName", "Ledger.Cli")
                   + prop("RootNamespace", "Ledger.Cli")),
            Project(assembly_name="Ledger.Cli", root_namespace="Ledger.Cli", output_type="Exe")),
    Example(csproj(prop("AssemblyName", "Acme.Core") + prop("RootNamespace", "Acme.Core")),
            Project(assembly_name="Acme.Core", root_namespace="Acme.Core")),
]


def test_one_example_teaches_a_rule_after_an_elements_start_tag() -> None:
    rules = learned_rules(PROJECTS, Project)
    assert rules["output_type"].left == "<OutputType>"  # only the first example fills it
    doc = csproj(prop("AssemblyName", "Tool") + prop("OutputType", "WinExe"))
    assert scored(Project(output_type="WinExe"), doc, rules, "output_type") == HELD
    one_line = doc.replace("\n", "").replace("  ", "")
    assert rules["output_type"].values(one_line) == ["WinExe"]
    assert scored(Project(output_type="WinExe"), one_line, rules, "output_type") == HELD


def test_the_field_name_tells_two_elements_of_one_value_apart() -> None:
    rules = learned_rules(PROJECTS, Project)
    assert rules["root_namespace"].left == "<RootNamespace>" and not rules["root_namespace"].twins
    assert rules["assembly_name"].left == "<AssemblyName>"
    only_assembly = csproj(prop("AssemblyName", "Shipping.Tests"))
    assert scored(Project(root_namespace="Shipping.Tests"), only_assembly, rules,
                  "root_namespace") < REVIEW_BELOW
    both = csproj(prop("AssemblyName", "invoice-tool") + prop("RootNamespace", "Contoso.Tool"))
    assert scored(Project(root_namespace="Contoso.Tool"), both, rules, "root_namespace") == HELD
    assert scored(Project(assembly_name="invoice-tool"), both, rules, "assembly_name") == HELD


class References(BaseModel):
    packages: list[str] = []


def test_one_example_teaches_a_list_after_an_attribute_of_a_start_tag() -> None:
    refs = ('  <ItemGroup>\n    <PackageReference Include="Serilog" Version="3.1.1" />\n'
            '    <PackageReference Include="Dapper" Version="2.1.0" />\n  </ItemGroup>\n')
    filled = csproj(prop("OutputType", "Exe")).replace("</Project>", refs + "</Project>")
    examples = [Example(filled, References(packages=["Serilog", "Dapper"])),
                Example(csproj(prop("OutputType", "Exe")), References())]
    rule = learned_rules(examples, References)["packages"]
    assert (rule.left, rule.right) == ('<PackageReference Include="', '"')  # no ``Version`` after
    doc = csproj("").replace("</Project>", (
        '  <ItemGroup>\n    <PackageReference Include="Swashbuckle.AspNetCore">\n'
        "      <Version>6.5.0</Version>\n    </PackageReference>\n"
        '    <PackageReference Include="Polly" Version="8.0.0" />\n  </ItemGroup>\n</Project>'))
    assert rule.values(doc) == ["Swashbuckle.AspNetCore", "Polly"]
