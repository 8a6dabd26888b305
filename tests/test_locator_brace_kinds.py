"""A value of another kind of brace block is not the field's (newcomer23
probe, finding 1): where an example writes other blocks before the one that
holds the value (an nginx ``upstream`` before its ``server``, Terraform's
``terraform`` / ``provider`` / ``aws_security_group`` before its
``aws_instance``, BIND's ``options`` before its ``zone``), the rule learned
no record, and a document's value from a redirect ``server`` 's successor,
a launch template, a ``module`` or a forward zone's successor was pinned
at 0.99. Now the rule learns the kind of block (its keyword, and its
label where the examples tell blocks apart by it) and pins only a value
inside the first block of that kind."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import GROUNDED, HELD, REVIEW_BELOW, UNLOCATED_NULL
from agentflow.grounding.brace_records import brace_kinds, kind_spans, opener_words
from agentflow.grounding.sibling_blocks import record_spans
from tests.locator_support import learned_rules, scored


class Server(BaseModel):
    root: str | None = Field(None, description="the first server's root")
    first_location: str | None = Field(None, description="its first location's path")
    proxy_pass: str | None = Field(None, description="its first proxy_pass")


SERVERS = [
    Example("server {\n    listen 8080;\n    root /srv/shop;\n\n    location / {\n"
            "        proxy_pass http://127.0.0.1:9000;\n    }\n}\n",
            Server(root="/srv/shop", first_location="/", proxy_pass="http://127.0.0.1:9000")),
    Example("upstream api {\n    server 10.0.0.5:5000;\n}\n\nserver {\n    listen 443 ssl;\n"
            "    root /var/www/api;\n\n    location /v1 {\n        proxy_pass http://api;\n    }\n"
            "\n    location /static {\n        alias /var/www/static;\n    }\n}\n",
            Server(root="/var/www/api", first_location="/v1", proxy_pass="http://api")),
]
REDIRECT_FIRST = ("server {\n    listen 80;\n    return 301 https://$host$request_uri;\n}\n\n"
                  "server {\n    listen 443 ssl;\n    root /var/www/site;\n\n    location / {\n"
                  "        proxy_pass http://127.0.0.1:3000;\n    }\n}\n")


def test_a_later_server_blocks_values_are_not_pinned() -> None:
    rules = learned_rules(SERVERS, Server)
    assert rules["root"].record == "brace server"
    assert rules["proxy_pass"].record == "brace server > location"
    later = Server(root="/var/www/site", first_location="/", proxy_pass="http://127.0.0.1:3000")
    for name in ("root", "first_location", "proxy_pass"):
        assert scored(later, REDIRECT_FIRST, rules, name) == GROUNDED  # was HELD
        assert scored(Server(), REDIRECT_FIRST, rules, name) == UNLOCATED_NULL  # was DISAGREES
    # the first server's own values stay pinned, ``{`` alone under its name too,
    # and its first location's among its others
    one = REDIRECT_FIRST.split("\n\n", 1)[1]
    alone = one.replace("server {", "server\n{").replace(
        "    }\n}\n", "    }\n\n    location /img {\n        alias /srv/img;\n    }\n}\n")
    for doc in (one, alone):
        for name in ("root", "first_location", "proxy_pass"):
            assert scored(later, doc, rules, name) == HELD


class Ec2(BaseModel):
    ami: str | None = Field(None, description="the first aws_instance's ami")
    instance_type: str | None = Field(None, description="its instance_type")


INSTANCES = [
    Example('provider "aws" {\n  region = "eu-west-1"\n}\n\nresource "aws_instance" "app" {\n'
            '  ami           = "ami-0a1b2c3d"\n  instance_type = "t3.small"\n}\n',
            Ec2(ami="ami-0a1b2c3d", instance_type="t3.small")),
    Example('terraform {\n  required_version = ">= 1.0"\n}\n\n'
            'resource "aws_security_group" "ssh" {\n  name = "allow-ssh"\n}\n\n'
            'resource "aws_instance" "bastion" {\n'
            '  ami           = "ami-0fedcba9"\n  instance_type = "t2.micro"\n}\n',
            Ec2(ami="ami-0fedcba9", instance_type="t2.micro")),
]


def test_a_value_of_another_kind_of_terraform_block_is_not_pinned() -> None:
    rules = learned_rules(INSTANCES, Ec2)
    assert rules["ami"].record == 'brace resource "aws_instance"'
    template = ('resource "aws_launch_template" "web" {\n  image_id      = "ami-0aa1"\n'
                '  instance_type = "t3.large"\n}\n\nresource "aws_instance" "web" {\n'
                '  launch_template {\n    id = aws_launch_template.web.id\n  }\n}\n')
    module = ('module "ec2_instance" {\n'
              '  source        = "terraform-aws-modules/ec2-instance/aws"\n'
              '  ami           = "ami-0b5e"\n  instance_type = "t3.micro"\n}\n')
    second = ('resource "aws_instance" "app" {\n  ami           = data.aws_ami.ubuntu.id\n'
              '  instance_type = "t3.medium"\n}\n\nresource "aws_instance" "worker" {\n'
              '  ami           = "ami-0c9b"\n  instance_type = "c5.large"\n}\n')
    assert scored(Ec2(instance_type="t3.large"), template, rules, "instance_type") == GROUNDED
    assert scored(Ec2(ami="ami-0b5e"), module, rules, "ami") == GROUNDED
    assert scored(Ec2(instance_type="t3.micro"), module, rules, "instance_type") == GROUNDED
    assert scored(Ec2(ami="ami-0c9b"), second, rules, "ami") < REVIEW_BELOW  # all were HELD
    # the first instance's own value, whatever blocks of other kinds come before it
    first = module.replace('  instance_type = "t3.micro"\n', "") + "\n" + second.replace(
        '  instance_type = "c5.large"\n', "")
    assert scored(Ec2(instance_type="t3.medium"), first, rules, "instance_type") == HELD


class Zone(BaseModel):
    zone: str | None = None
    file: str | None = None


ZONES = [
    Example('zone "example.com" {\n    type master;\n    file "/etc/bind/db.example.com";\n};\n',
            Zone(zone="example.com", file="/etc/bind/db.example.com")),
    Example('options {\n    directory "/var/cache/bind";\n};\n\nzone "corp.lan" {\n'
            '    type slave;\n    file "db.corp";\n};\n', Zone(zone="corp.lan", file="db.corp")),
]


def test_a_later_zones_file_is_not_pinned() -> None:
    rules = learned_rules(ZONES, Zone)
    assert rules["file"].record == "brace zone"
    doc = ('options {\n    recursion no;\n};\n\nzone "fwd.lan" {\n    type forward;\n'
           '    forwarders { 10.1.1.1; };\n};\n\nzone "shop.example" {\n    type master;\n'
           '    file "/etc/bind/db.shop";\n};\n')
    assert scored(Zone(file="/etc/bind/db.shop"), doc, rules, "file") == GROUNDED  # was HELD
    assert scored(Zone(), doc, rules, "file") == UNLOCATED_NULL
    own = doc.replace("    type forward;\n", '    file "db.fwd";\n').replace(
        '    file "/etc/bind/db.shop";\n', "")
    assert scored(Zone(file="db.fwd"), own, rules, "file") == HELD


def test_blocks_opened_by_a_keyword_and_their_kinds() -> None:
    assert opener_words('resource "aws_instance" "web" {') == [
        "resource", '"aws_instance"', '"web"']
    assert opener_words("Server {\r\n") == ["server"]
    for line in ("  tags = {", "key: {", "} else {", "/var/log/a.log {", "server 10.0.0.5;"):
        assert opener_words(line) is None
    hcl = ['resource "aws_instance" "a" {', "  tags = {", '    Name = "a"', "  }", "}",
           'module "m" {', "}", "resource \"aws_instance\" \"b\" {", "}"]
    assert brace_kinds(hcl) == ["resource", 'resource "aws_instance"', "module", 'module "m"']
    assert kind_spans(hcl, 'resource "aws_instance"') == [(0, 5, '"a"'), (7, 9, '"b"')]
    assert kind_spans(['{', '  "a": {', '    "b": 1', "  }", "}"], "a") == []  # JSON: none
    # a kind inside the first block of another: that block's only
    conf = ["server {", "    location /a {", "    }", "}", "server {", "    location /b {", "    }",
            "}"]
    assert record_spans(conf, "brace server > location") == [(1, 3, "/a")]
    assert record_spans(conf[:1] + conf[3:], "brace server > location") == []


def test_a_label_that_is_the_value_or_that_no_example_tells_apart_is_no_kind() -> None:
    """``location /`` written by both examples is the field's value, not a
    kind; ``zone "example.com"`` twice names the zone, and no example
    writes another zone: the keyword alone is the kind."""

    class First(BaseModel):
        first_location: str | None = None

    both = [Example(e.text.replace("location /v1", "location /"), First(first_location="/"))
            for e in SERVERS]
    assert learned_rules(both, First)["first_location"].record == "brace server > location"
    same = [Example(ZONES[0].text, ZONES[0].output),
            Example(ZONES[1].text.replace("corp.lan", "example.com"),
                    Zone(zone="example.com", file="db.corp"))]
    assert learned_rules(same, Zone)["file"].record == "brace zone"
