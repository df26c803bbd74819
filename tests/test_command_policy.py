"""The command policy, pure (no lab): normalisation, abbreviations, session rules, the
teaching (read-only) rules per dialect, and hot reload of an admin rule file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_gns3_copilot.devices.policy import (
    DEFAULT_POLICY_FILE,
    CommandPolicy,
    command_words,
    config_mode_action,
    parse_rules,
)


@pytest.fixture(scope="module")
def policy() -> CommandPolicy:
    return CommandPolicy()


def blocked(policy: CommandPolicy, command: str, dialect: str, **kwargs: object) -> str:
    reason = policy.check(command, dialect=dialect, **kwargs)  # type: ignore[arg-type]
    assert reason is not None, f"{command!r} should be blocked on {dialect}"
    return reason


def test_the_shipped_list_loads_without_problems(policy: CommandPolicy) -> None:
    status = policy.status()
    assert status.file == str(DEFAULT_POLICY_FILE)
    assert status.rules > 20 and status.problems == []


def test_words_are_normalised() -> None:
    assert command_words("  SHOW   ip  Route ") == ["show", "ip", "route"]
    assert command_words("!ls -l") == ["!", "ls", "-l"]


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("write erase", "write erase"),
        ("wr er", "write erase"),
        ("WR   ERASE", "write erase"),
        ("reload", "reload"),
        ("rel in 5", "reload"),
        ("erase startup-config", "erase"),
        ("delete flash:vlan.dat", "delete"),
        ("format flash:", "format"),
        ("debug all", "debug"),
        ("deb ip ospf adj", "debug"),
        ("copy tftp: startup-config", "copy * startup-config"),
        ("copy tftp nvram:startup-config", "copy * *:startup-config"),
        ("username admin privilege 15 password cisco", "username"),
        ("en sec cisco", "enable secret"),
        ("enable password cisco", "enable password"),
    ],
)
def test_forbidden_ios_exec_commands_match_on_words_and_abbreviations(
    policy: CommandPolicy, command: str, rule: str
) -> None:
    reason = blocked(policy, command, "cisco_ios")
    assert reason.startswith(f"forbidden by the command policy (rule `{rule}`)")


@pytest.mark.parametrize(
    "command",
    [
        "wr",
        "write memory",
        "copy run start",
        "copy running-config startup-config",
        "undebug all",
        "no debug all",
        "show running-config | include ospf",
        "sh ip int br | ex unassigned",
        "ping 10.0.0.1 repeat 3",
        "clear ip ospf process",
    ],
)
def test_lab_mode_allows_ordinary_ios_exec_commands(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="cisco_ios") is None


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("no aaa new-model", "aaa"),
        ("aaa new-model", "aaa"),
        ("no username bob", "username"),
        ("default username bob", "username"),
        ("no exec", "exec"),
        ("password cisco", "password"),
        ("no login", "login"),
        ("do write erase", "write erase"),
        ("configure replace flash:base.cfg", "configure replace"),
        ("config-register 0x2142", "config-register"),
        ("boot system flash:c7200.bin", "boot"),
    ],
)
def test_ios_config_rules_also_cover_no_default_and_do(
    policy: CommandPolicy, command: str, rule: str
) -> None:
    reason = blocked(policy, command, "cisco_ios", context="config")
    assert f"(rule `{rule}`)" in reason


@pytest.mark.parametrize(
    "command",
    [
        "interface GigabitEthernet0/0",
        "ip address 10.0.0.1 255.255.255.0",
        "no shutdown",
        "line con 0",
        "exec-timeout 0 0",
        "logging synchronous",
        "router ospf 1",
        "conf t",
        "end",
        "exit",
        "do show ip interface brief",
    ],
)
def test_ordinary_configuration_lines_pass(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="cisco_ios", context="config") is None


@pytest.mark.parametrize(
    ("command", "dialect", "expected"),
    [
        ("exit", "cisco_ios", "would end the console session"),
        ("logout", "cisco_ios", "would end the console session"),
        ("disable", "cisco_ios", "privilege level"),
        ("conf t", "cisco_ios", "run_config_commands"),
        ("ping", "cisco_ios", "interactive dialog"),
        ("tclsh", "cisco_ios", "interactive dialog"),
        ("show ip route | redirect flash:x", "cisco_ios", "output modifier"),
        ("quit", "vpcs", "would end the console session"),
        ("q", "vpcs", "would end the console session"),
        ("!ls /", "vpcs", "GNS3 host"),
        ("2", "vpcs", "another virtual PC"),
        ("rlogin 2000", "vpcs", "outside the lab"),
        ("save /etc/profile", "vpcs", "GNS3 host"),
        ("exit", "linux", "would end the console session"),
        ("top", "linux", "interactive"),
        ("ping 10.0.0.1", "linux", "-c COUNT"),
        ("echo $(id)", "linux", "command substitution"),
    ],
)
def test_session_rules_hold_in_every_mode(
    policy: CommandPolicy, command: str, dialect: str, expected: str
) -> None:
    assert expected in blocked(policy, command, dialect)


def test_exit_and_do_exit_inside_configuration(policy: CommandPolicy) -> None:
    assert policy.check("exit", dialect="cisco_ios", context="config") is None
    assert "end the console session" in blocked(policy, "do exit", "cisco_ios", context="config")
    assert "end the console session" in blocked(policy, "logout", "cisco_ios", context="config")


@pytest.mark.parametrize(
    "command",
    [
        "show ip",
        "sh ip",
        "show arp",
        "arp",
        "ping 10.0.0.2",
        "p 10.0.0.2 -c 2",
        "trace 10.0.0.2",
        "echo hi",
        "e hi",
        "version",
        "?",
        "history",
    ],
)
def test_teaching_mode_runs_vpcs_diagnostics(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="vpcs", read_only=True) is None


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("ip 10.0.0.9/24", "would change the device"),
        ("ip dhcp", "would change the device"),
        ("dhcp", "would change the device"),
        ("set pcname X", "would change the device"),
        ("clear ip", "would change the device"),
        ("save", "would change the device"),
        ("load", "would change the device"),
        ("sleep 5", "would change the device"),
        ("s", "ambiguous abbreviation"),
        ("bogus", "is not one of them"),
    ],
)
def test_teaching_mode_refuses_vpcs_changes(policy: CommandPolicy, command: str, why: str) -> None:
    reason = blocked(policy, command, "vpcs", read_only=True)
    assert reason.startswith("teaching_assistant mode only runs diagnostic commands")
    assert why in reason and "lab_automation_assistant" in reason


@pytest.mark.parametrize(
    "command",
    [
        "show ip interface brief",
        "sh run | section ospf",
        "ping 10.0.0.1",
        "traceroute 10.0.0.1",
        "trace 10.0.0.1",
        "dir flash:",
        "show arp",
    ],
)
def test_teaching_mode_runs_ios_diagnostics(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="cisco_ios", read_only=True) is None


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("conf t", "would enter configuration mode"),
        ("configure terminal", "would enter configuration mode"),
        ("wr", "would change the device"),
        ("copy run start", "would change the device"),
        ("clear ip ospf process", "would change the device"),
        ("reload", "would change the device"),
        ("te", "ambiguous abbreviation"),
    ],
)
def test_teaching_mode_refuses_ios_changes(policy: CommandPolicy, command: str, why: str) -> None:
    assert why in blocked(policy, command, "cisco_ios", read_only=True)


@pytest.mark.parametrize(
    ("dialect", "command", "sent", "what"),
    [
        ("vpcs", "ping 10.0.0.2 -c 99999", "ping 10.0.0.2 -c 10", "`-c 10`"),
        ("vpcs", "ping 10.0.0.2 -t", "ping 10.0.0.2 -c 10", "`-c 10`"),
        ("vpcs", "p  10.0.0.2  -t", "p 10.0.0.2 -c 10", "`-c 10`"),
        ("vpcs", "ping 10.0.0.2 -t -c 3", "ping 10.0.0.2 -c 3", "its `-c` count without `-t`"),
        ("cisco_ios", "ping 10.0.0.2 repeat 100000", "ping 10.0.0.2 repeat 10", "`repeat 10`"),
        ("cisco_ios", "ping 10.0.0.2 rep 50 size 100", "ping 10.0.0.2 rep 10 size 100", None),
        ("linux", "ping -c 99999 10.0.0.2", "ping -c 10 10.0.0.2", "`-c 10`"),
        ("linux", "ping -c99999 10.0.0.2", "ping -c10 10.0.0.2", "`-c 10`"),
    ],
)
def test_teaching_mode_caps_endless_pings(
    policy: CommandPolicy, dialect: str, command: str, sent: str, what: str | None
) -> None:
    screening = policy.screen([command, "show ip"], dialect=dialect, read_only=True)
    if dialect == "linux":
        screening = policy.screen([command], dialect=dialect, read_only=True)
    assert screening.allowed[0] == sent and not screening.blocked
    [capped] = screening.capped
    assert (capped.command, capped.sent) == (command, sent)
    assert capped.reason.startswith(f"capped to {what or '`repeat 10`'} in teaching mode")
    assert capped.reason.endswith("(at most 10 probes)")


@pytest.mark.parametrize(
    ("dialect", "command"),
    [
        ("vpcs", "ping 10.0.0.2"),
        ("vpcs", "ping 10.0.0.2 -c 10"),
        ("vpcs", "show ip"),
        ("cisco_ios", "ping 10.0.0.2 repeat 5"),
        ("cisco_ios", "show ip route"),
        ("linux", "ping -c 3 10.0.0.2 | grep -c ttl"),
    ],
)
def test_bounded_commands_and_lab_mode_are_left_as_typed(
    policy: CommandPolicy, dialect: str, command: str
) -> None:
    assert policy.screen([command], dialect=dialect, read_only=True).capped == []
    endless = {"vpcs": "ping 10.0.0.2 -t", "cisco_ios": "ping 10.0.0.2 repeat 99999"}
    if dialect in endless:
        lab = policy.screen([endless[dialect]], dialect=dialect)
        assert lab.allowed == [endless[dialect]] and lab.capped == []


def test_teaching_mode_never_runs_configuration_lines(policy: CommandPolicy) -> None:
    reason = blocked(policy, "interface g0/0", "cisco_ios", read_only=True, context="config")
    assert "never enters configuration mode" in reason


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("ip a", True),
        ("ip -4 addr show dev eth0", True),
        ("ip route", True),
        ("ping -c 3 10.0.0.1", True),
        ("cat /etc/hosts | grep 10.0", True),
        ("ip addr add 10.0.0.5/24 dev eth0", False),
        ("sudo ip link set eth0 down", False),
        ("ifconfig eth0 10.0.0.5", False),
        ("cat /etc/hosts | sh", False),
        ("ls; touch /tmp/x", False),
        ("echo hi > /tmp/x", False),
    ],
)
def test_teaching_mode_on_linux_shells(policy: CommandPolicy, command: str, allowed: bool) -> None:
    assert (policy.check(command, dialect="linux", read_only=True) is None) is allowed


@pytest.mark.parametrize(
    "command",
    [
        "reboot",
        "sudo -u root reboot",
        "ls && reboot",
        "if true; then reboot; fi",
        "X=1 reboot",
        "rm -rf /etc",
        "mkfs.ext4 /dev/sdb",
        "bash -c reboot",
    ],
)
def test_linux_lines_are_checked_part_by_part(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="linux") is not None


def test_linux_takes_no_abbreviations(policy: CommandPolicy) -> None:
    assert policy.check("rebo", dialect="linux") is None
    assert policy.check("ip addr add 10.0.0.5/24 dev eth0", dialect="linux") is None


def test_screen_keeps_order_and_reports_every_block(policy: CommandPolicy) -> None:
    screening = policy.screen(
        ["show ip", "ip 10.0.0.9/24", "ping 10.0.0.2", "save"], dialect="vpcs", read_only=True
    )
    assert screening.allowed == ["show ip", "ping 10.0.0.2"]
    assert [b.command for b in screening.blocked] == ["ip 10.0.0.9/24", "save"]
    assert all(b.reason for b in screening.blocked)


@pytest.mark.parametrize(
    ("command", "action"),
    [
        ("conf t", "enter"),
        ("configure terminal", "enter"),
        ("configure", "enter"),
        ("end", "leave"),
        ("exit", "exit"),
        ("configure replace flash:x", None),
        ("interface g0/0", None),
    ],
)
def test_config_mode_commands_are_recognised(command: str, action: str | None) -> None:
    assert config_mode_action(command, "cisco_ios") == action
    assert config_mode_action(command, "vpcs") is None


def test_rule_file_syntax() -> None:
    rules, problems = parse_rules(
        "# comment\n"
        "\n"
        "shutdown -- takes the port down\n"
        "cisco_ios, vpcs: foo * bar $ -- scoped\n"
        "allow: foo x bar baz\n"
        "klingon: reload\n",
        "test.txt",
    )
    assert [r.text for r in rules] == ["shutdown", "foo * bar $", "foo x bar baz"]
    assert rules[0].reason == "takes the port down" and rules[0].dialects is None
    assert rules[1].whole and rules[1].dialects == frozenset({"cisco_ios", "vpcs"})
    assert rules[2].allow
    assert len(problems) == 1 and problems[0].startswith("test.txt:6: Unknown console dialect")


def test_an_admin_file_replaces_the_default_and_reloads_when_it_changes(tmp_path: Path) -> None:
    admin = tmp_path / "forbidden.txt"
    policy = CommandPolicy(admin)
    assert policy.status().file == str(DEFAULT_POLICY_FILE)
    assert policy.check("reload", dialect="cisco_ios") is not None

    admin.write_text("shutdown -- the class keeps every port up\n", encoding="utf-8")
    assert policy.status().file == str(admin)
    assert policy.check("reload", dialect="cisco_ios") is None, "the default no longer applies"
    reason = blocked(policy, "shut", "cisco_ios", context="config")
    assert "the class keeps every port up" in reason

    admin.write_text("shutdown -- the class keeps every port up\nping\n", encoding="utf-8")
    stat = admin.stat()
    os.utime(admin, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert policy.check("ping 10.0.0.1", dialect="vpcs") is not None, "picked up by mtime"

    assert policy.reload().rules == 2
    admin.unlink()
    assert policy.check("ping 10.0.0.1", dialect="vpcs") is None
    assert policy.status().file == str(DEFAULT_POLICY_FILE)


FRR_READS = [
    "show ip ospf neighbor",
    "show interface brief",
    "sh ip route json",
    "show running-config | include ospf",
    "ping 10.0.12.2",
    "traceroute 10.0.12.2",
]
FRR_CHANGES = ["write memory", "wr", "clear ip ospf process", "clear bgp *", "copy run start"]


@pytest.mark.parametrize("command", FRR_READS)
def test_teaching_mode_runs_frr_diagnostics(policy: CommandPolicy, command: str) -> None:
    assert policy.check(command, dialect="frr", read_only=True) is None


@pytest.mark.parametrize(
    ("command", "why"),
    [
        *((command, "would change the device") for command in FRR_CHANGES),
        ("conf t", "would enter configuration mode"),
    ],
)
def test_teaching_mode_refuses_frr_changes(policy: CommandPolicy, command: str, why: str) -> None:
    assert why in blocked(policy, command, "frr", read_only=True)


def test_teaching_mode_never_configures_an_frr_router(policy: CommandPolicy) -> None:
    reason = blocked(policy, "router ospf", "frr", read_only=True, context="config")
    assert "never enters configuration mode" in reason


def test_lab_mode_asks_before_frr_changes_and_runs_reads_at_once(policy: CommandPolicy) -> None:
    """In lab mode every FRR change is sent only after approval (`configuring`), reads
    are not; every line typed in configuration mode is a change too."""
    screening = policy.screen([*FRR_READS, *FRR_CHANGES], dialect="frr")
    assert screening.allowed == [*FRR_READS, *FRR_CHANGES] and not screening.blocked
    assert screening.configuring == FRR_CHANGES
    lines = ["interface eth0", "ip address 10.0.12.1/24", "router ospf", "exit", "end"]
    screening = policy.screen(lines, dialect="frr", context="config")
    assert screening.allowed == lines and not screening.blocked
    assert screening.configuring == lines


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("quit", "would end the console session"),
        ("exit", "would end the console session"),
        ("start-shell", "interactive dialog"),
        ("debug ospf event", "console"),
        ("username admin nopassword", "instructor"),
        ("show run | redirect x", "not allowed"),
    ],
)
def test_frr_session_and_file_rules_hold_in_lab_mode(
    policy: CommandPolicy, command: str, why: str
) -> None:
    assert why in blocked(policy, command, "frr")


def test_frr_configuration_mode_is_entered_and_left_like_ios() -> None:
    assert config_mode_action("conf t", "frr") == "enter"
    assert config_mode_action("end", "frr") == "leave"
    assert config_mode_action("router ospf", "frr") is None
