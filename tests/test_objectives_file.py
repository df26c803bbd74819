"""The lab file (`objectives/`): schema, problems with their lines, per-student values,
templates. No GNS3 here: checks against real devices are in test_objectives_checks.py."""

from __future__ import annotations

import ipaddress
import json
import textwrap

import jsonschema
import pytest
import yaml

from jupyter_gns3_copilot.objectives.errors import LabFileError
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.parameters import student_values
from jupyter_gns3_copilot.objectives.schema import SCHEMA_FILE, lab_schema, schema_text

LAB = textwrap.dedent(
    """\
    title: Addressing and routing
    parameters:
      net: {subnet: {pool: 10.0.0.0/16, prefix: 24}}
      vlan: {int: [10, 99]}
      site: {choice: [north, south, east]}
    stages:
      - id: addressing
        title: Address the PCs
        snapshot: start-addressing
        objectives:
          - id: pc1-address
            text: "PC1 has {{ net | host(1) }}/{{ net | prefixlen }}"
            check: {kind: address, node: PC1, address: "{{ net | host(1) }}/{{ net | prefixlen }}"}
          - id: pc1-pc2
            text: PC1 reaches PC2
            points: 2
            check: {kind: reachable, from: PC1, to: PC2, wait: 20}
      - id: routing
        title: Routing in site {{ site }}
        hints: off
        objectives:
          - id: ospf
            text: R1 has a full OSPF neighbour
            all:
              - kind: parsed
                node: R1
                command: show ip ospf neighbor
                match: {neighbor_id: 2.2.2.2, state: /FULL/}
              - {kind: command, node: R1, command: show ip route, contains: "O "}
          - id: isolated
            text: PC3 cannot reach the server
            any:
              - {kind: reachable, from: PC3, to: 10.9.9.9, expect: false}
              - {kind: link, between: [[PC3, e0], [SW1, e3]]}
              - kind: traffic
                link: "PC1 e0 - SW1 e1"
                filter: icmp
                during: {ping: {from: PC1, to: PC2}}
              - {kind: node_running, node: R1}
    """
)


def problem_of(text: str) -> str:
    with pytest.raises(LabFileError) as caught:
        load_lab(text)
    return str(caught.value)


def test_a_valid_lab_reads_with_its_defaults() -> None:
    lab = load_lab(LAB).lab
    addressing, routing = lab.stages
    assert addressing.hints == "nudge" and routing.hints == "off"
    assert addressing.snapshot == "start-addressing"
    reach = addressing.objectives[1].check
    assert reach is not None and reach.kind == "reachable"
    assert (reach.source, reach.to, reach.expect, reach.count, reach.wait) == (
        "PC1",
        "PC2",
        True,
        3,
        20,
    )
    assert addressing.objectives[0].points == 1 and addressing.objectives[1].points == 2
    assert [c.kind for c in routing.objectives[1].checks] == [
        "reachable",
        "link",
        "traffic",
        "node_running",
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # a misspelt field: named, at its line, and the missing one too
        (
            "kind: reachable, from: PC1",
            "kind: reachable, frm: PC1",
            "lab.yaml, line 17, stages[0].objectives[1].check.frm: unknown field 'frm'",
        ),
        (
            "kind: address",
            "kind: adress",
            "line 13, stages[0].objectives[0].check: unknown check kind; the kinds are "
            "reachable, address, command, parsed, node_running, link, traffic",
        ),
        (
            'contains: "O "',
            "contains: x, regex: y",
            "line 29, stages[1].objectives[0].all[1]: a command check needs exactly one of "
            "contains, regex or not_contains (found contains, regex)",
        ),
        (
            "  - id: routing",
            "  - id: 7routing",
            "line 18, stages[1].id: an id starts with a letter",
        ),
        ("id: isolated", "id: pc1-pc2", "line 30, stages[1].objectives[1].id: another objective"),
        (
            "hints: off",
            "hints: of\n    hints: off",
            "line 21, stages[1].hints: 'hints' is given twice",
        ),
        ("prefix: 24", "prefix: 8", "line 3, parameters.net.subnet: prefix /8 is shorter"),
        ("state: /FULL/", "state: /FU(LL/", "line 28, stages[1].objectives[0].all[0].match"),
        ("wait: 20", "wait: -1", "line 17, stages[0].objectives[1].check.wait: Input should be"),
        ("title: Routing in", "title: [Routing in", "line 19: not valid YAML"),
        # templates are tried for a sample student when the file is read
        (
            '{{ net | host(1) }}/{{ net | prefixlen }}"}',
            '{{ net | host(300) }}/24"}',
            "line 13, stages[0].objectives[0].check.address: the template "
            "'{{ net | host(300) }}/24' cannot be rendered",
        ),
        ("PC1 has {{ net | host(1) }}", "PC1 has {{ nett }}", "'nett' is undefined"),
        (
            '{{ net | host(1) }}/{{ net | prefixlen }}"}',
            '{{ net | network }}"}',
            "check.address: '10.0.",
        ),
        # a command check's words, and a reachable check's expected address
        (
            'contains: "O "',
            'contains: "O ", read: "O (.*) (.*)"',
            "line 29, stages[1].objectives[0].all[1]: read 'O (.*) (.*)' needs exactly one "
            "(group): the value",
        ),
        (
            'contains: "O "',
            'contains: "O ", say: {fail: "R1 routes {{ found }}"}',
            "say uses {{ found }}: give read, the regex that finds it",
        ),
        (
            "PC1 reaches PC2\n",
            "PC1 reaches PC2 {{ found }}\n",
            "line 15, stages[0].objectives[1].text: the template",
        ),
        (
            "to: PC2, wait: 20",
            "to: PC2, address: PC2, wait: 20",
            "line 17, stages[0].objectives[1].check: 'PC2' is not an IPv4 address",
        ),
        (
            "to: PC2, wait: 20",
            "to: 10.0.0.2, address: 10.0.0.2, wait: 20",
            "address is the address of a node: name the node in to",
        ),
        (
            "to: PC2, wait: 20",
            'to: PC2, address: "{{ net | host(300) }}", wait: 20',
            "check.address: the template '{{ net | host(300) }}' cannot be rendered",
        ),
        # a check that would change any device is refused when the file is read
        (
            "command: show ip route",
            "command: configure terminal",
            "line 29, stages[1].objectives[0].all[1].command: a check may only read a device; "
            "'configure terminal' is refused on any device",
        ),
    ],
)
def test_a_problem_names_the_file_the_line_and_the_field(old: str, new: str, expected: str) -> None:
    assert old in LAB
    assert expected in problem_of(LAB.replace(old, new))


def test_every_problem_is_listed() -> None:
    with pytest.raises(LabFileError) as caught:
        load_lab(LAB.replace("wait: 20", "wait: -1").replace("points: 2", "points: -2"), "x.yaml")
    fields = [p.field for p in caught.value.problems]
    assert fields == ["stages[0].objectives[1].points", "stages[0].objectives[1].check.wait"]
    assert all(p.source == "x.yaml" and p.line == 17 for p in caught.value.problems[1:])


def test_what_is_not_a_lab_is_said_plainly() -> None:
    assert "a mapping with title and stages" in problem_of("- just\n- a list\n")
    assert "stages: Field required" in problem_of("title: Empty\n")
    assert "not UTF-8" in problem_of(b"title: \xff\n")  # type: ignore[arg-type]
    assert "over 512 kB" in problem_of("#" * (600 * 1024))


def test_yaml_words_stay_words() -> None:
    """YAML 1.1 would read `off`, `no` and `yes` as booleans: a hint policy, a node."""
    lab = load_lab(LAB.replace("node: R1}", "node: yes}")).lab
    assert lab.stages[1].hints == "off"
    assert lab.stages[1].objectives[1].checks[3].node == "yes"


def test_a_check_command_is_judged_for_the_nodes_dialect() -> None:
    """`ip ...` configures a VPCS: refused once the node is known to be one."""
    text = LAB.replace("node: R1, command: show ip route", "node: PC1, command: ip 10.0.0.1/24")
    document = load_lab(text)  # some dialect (Linux) would only read with it
    with pytest.raises(LabFileError) as caught:
        document.check_commands(_policy_check, {"PC1": "vpcs", "R1": "cisco_ios"}.get)
    assert (
        "all[1].command: a check may only read a device; 'ip 10.0.0.1/24' is refused on PC1 (vpcs)"
        in str(caught.value)
    )
    document.check_commands(_policy_check, {"PC1": "linux", "R1": "cisco_ios"}.get)


def test_a_json_checks_command_is_judged_like_a_command_checks() -> None:
    """A `json` check names its command too: judged for the node's dialect when the file
    is attached (a Linux shell runs no `show`), run on an FRR router."""
    text = textwrap.dedent(
        """\
        title: JSON
        stages:
          - id: s
            title: S
            objectives:
              - id: o
                text: R1 runs OSPF as 1.1.1.1
                check:
                  kind: json
                  node: R1
                  command: show ip ospf json
                  query: routerId
                  expect: 1.1.1.1
        """
    )
    document = load_lab(text)
    document.check_commands(_policy_check, {"R1": "frr"}.get)
    with pytest.raises(LabFileError, match="'show ip ospf json' is refused on R1 \\(linux\\)"):
        document.check_commands(_policy_check, {"R1": "linux"}.get)


def test_the_nodes_checks_name_are_judged_against_the_projects() -> None:
    """Every place a check names a node, with its line; case does not matter; an address
    in `to` is no node."""
    document = load_lab(LAB)
    assert document.node_problems(["PC1", "pc2", "PC3", "R1", "SW1"]) == []
    problems = document.node_problems(["PC1", "PC2"])
    assert [(p.line, p.field) for p in problems] == [
        (26, "stages[1].objectives[0].all[0].node"),
        (29, "stages[1].objectives[0].all[1].node"),
        (33, "stages[1].objectives[1].any[0].from"),
        (34, "stages[1].objectives[1].any[1].between[0][0]"),
        (34, "stages[1].objectives[1].any[1].between[1][0]"),
        (36, "stages[1].objectives[1].any[2].link"),
        (39, "stages[1].objectives[1].any[3].node"),
    ]
    assert problems[0].message == "the project has no node called R1 (its nodes are PC1, PC2)"
    assert "(it has no nodes yet)" in document.node_problems([])[0].message


def test_a_command_checks_words_are_each_students_with_found_left_for_the_check() -> None:
    text = LAB.replace(
        'contains: "O "}',
        "contains: \"O \", read: '(\\S+) via', "
        'say: {fail: "R1 routes by {{ found }}, not {{ net | host(1) }}."}}',
    )
    document = load_lab(text)
    alice = document.for_student("alice", "salt")
    values = student_values(document.lab, "alice", "salt")
    check = alice.stages[1].objectives[0].checks[1]
    assert check.kind == "command" and check.say is not None
    assert check.say.failed == f"R1 routes by {{{{ found }}}}, not {values['net'][1]}."
    assert check.say.passed is None


def _policy_check(command: str, dialect: str) -> str | None:
    from jupyter_gns3_copilot.devices.policy import CommandPolicy

    return CommandPolicy().check(command, dialect=dialect, read_only=True)


# -- per-student values --------------------------------------------------------------------------


def test_values_are_the_same_for_a_student_and_differ_between_students() -> None:
    lab = load_lab(LAB).lab
    alice = student_values(lab, "alice", "class-salt")
    assert alice == student_values(lab, "alice", "class-salt")
    nets = {str(student_values(lab, f"student{i}", "class-salt")["net"]) for i in range(30)}
    assert len(nets) >= 25, nets  # 256 subnets: a few shared by chance at most
    assert student_values(lab, "alice", "other-salt") != alice
    net = alice["net"]
    assert isinstance(net, ipaddress.IPv4Network) and net.prefixlen == 24
    assert net.subnet_of(ipaddress.IPv4Network("10.0.0.0/16"))
    assert 10 <= int(alice["vlan"]) <= 99  # type: ignore[arg-type]
    assert alice["site"] in ("north", "south", "east")


def test_a_students_lab_has_their_values_filled_in() -> None:
    document = load_lab(LAB)
    values = student_values(document.lab, "alice", "class-salt")
    lab = document.for_student("alice", "class-salt")
    net = values["net"]
    assert isinstance(net, ipaddress.IPv4Network)
    first = net.network_address + 1
    assert lab.stages[0].objectives[0].text == f"PC1 has {first}/24"
    check = lab.stages[0].objectives[0].check
    assert check is not None and check.kind == "address" and check.address == f"{first}/24"
    assert lab.stages[1].title == f"Routing in site {values['site']}"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ net }}", "10.0.3.0/24"),
        ("{{ net | host(1) }}", "10.0.3.1"),
        ("{{ net | host(-1) }}", "10.0.3.254"),
        ("{{ net | netmask }}", "255.255.255.0"),
        ("{{ net | prefixlen }}", "24"),
        ("{{ net | network }}", "10.0.3.0"),
    ],
)
def test_subnet_filters(template: str, expected: str) -> None:
    from jupyter_gns3_copilot.objectives.templating import render_text

    assert render_text(template, {"net": ipaddress.IPv4Network("10.0.3.0/24")}) == expected


def test_templates_run_in_a_sandbox() -> None:
    from jupyter_gns3_copilot.objectives.templating import TemplateProblem, render_text

    with pytest.raises(TemplateProblem, match=r"unsafe|cannot be rendered"):
        render_text("{{ net.__class__.__mro__ }}", {"net": ipaddress.IPv4Network("10.0.0.0/24")})


# -- the shipped schema --------------------------------------------------------------------------


def test_the_shipped_schema_is_the_models() -> None:
    """`python -m jupyter_gns3_copilot.objectives.schema` writes it: run it after a change."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()


def test_the_schema_accepts_the_lab_and_refuses_what_the_loader_refuses() -> None:
    data = yaml.safe_load(LAB.replace("hints: off", 'hints: "off"'))
    jsonschema.validate(data, lab_schema())
    data["stages"][0]["objectives"][0]["check"]["kind"] = "adress"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json.loads(schema_text()))
