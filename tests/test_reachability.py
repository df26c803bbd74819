"""Pings and traces read from device output, per dialect (`devices/reachability`).

The outputs here are copied from the devices themselves: VPCS 0.5b2 (the Debian `vpcs`
of the local lab), iputils and BusyBox `ping` / BusyBox `traceroute` on this machine's
Linux, an FRR router's vtysh `ping` / `traceroute` in the routed lab, and the IOS forms
the IOS test double prints (IOS cannot run here). The same wordings produced live, on
the real lab, are in tests/test_reachability_lab.py; the cases here add what the lab
cannot produce on demand (partial answers, router errors, other versions' spellings).
"""

from __future__ import annotations

import pytest

from jupyter_gns3_copilot.devices.reachability import Check, read_check

VPCS_REPLY_05 = (
    "10.0.0.2 icmp_seq=1 ttl=64 time=0.056 ms\n10.0.0.2 icmp_seq=2 ttl=64 time=0.087 ms\n"
)
VPCS_REPLY_08 = "84 bytes from 10.0.0.2 icmp_seq=1 ttl=64 time=0.3 ms\n"
IOS_HEAD = (
    "Type escape sequence to abort.\n"
    "Sending 5, 100-byte ICMP Echos to 10.0.0.2, timeout is 2 seconds:\n"
)
IPUTILS_UNREACHABLE = (
    "PING 10.9.0.2 (10.9.0.2) 56(84) bytes of data.\n"
    "From 10.9.0.1 icmp_seq=1 Destination Host Unreachable\n\n"
    "--- 10.9.0.2 ping statistics ---\n"
    "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n"
)


def check(dialect: str, command: str, output: str) -> Check:
    read = read_check(dialect, command, output)
    assert read is not None, (dialect, command)
    return read


@pytest.mark.parametrize(
    ("command", "output", "problem"),
    [
        ("ping 10.0.1.2 -c 1", "No gateway found\n", "no gateway"),
        ("ping 10.0.0.9 -c 1", "host (10.0.0.9) not reachable\n", "address not reachable"),
        ("ping 10.0.1.2 -c 1", "host (10.0.0.254) not reachable\n", "address not reachable"),
        ("ping nosuch -c 1", "Cannot resolve nosuch\n", "host not found"),
        ("ping a.example -c 1", "No gateway found\nCannot resolve a.example\n", "host not found"),
        (
            "pi 999.1.1.1",
            "host (10.0.0.254) not reachable\nCannot resolve 999.1.1.1\n",
            "host not found",
        ),
        (
            "ping 10.0.0.2 -c 2",
            "10.0.0.2 icmp_seq=1 timeout\n10.0.0.2 icmp_seq=2 timeout\n",
            "timeout",
        ),
        ("ping 10.0.0.2 -c 1 -P 17", "10.0.0.2 udp_seq=1 timeout\n", "timeout"),
        (
            "ping 10.0.0.2 -c 1 -P 6",
            "ping 10.0.0.2 -c 1 -P 6\nConnect   7@10.0.0.2 timeout\n",
            "timeout",
        ),
        (
            "ping 10.0.1.2 -c 1",
            "*10.0.0.254 icmp_seq=1 ttl=255 time=1.089 ms (ICMP type:3, code:1, "
            "Destination host unreachable)\n",
            "destination unreachable",
        ),
        ("ping 10.0.0.2", "", "no answer"),
    ],
)
def test_every_vpcs_ping_failure_is_a_failed_check(command: str, output: str, problem: str) -> None:
    read = check("vpcs", command, output)
    assert (read.kind, read.outcome, read.problem) == ("ping", "failed", problem)
    assert not read.received


def test_vpcs_ping_answers_are_counted_in_each_version_and_protocol() -> None:
    assert check("vpcs", "ping 10.0.0.2 -c 2", VPCS_REPLY_05).as_dict() == {
        "command": "ping 10.0.0.2 -c 2",
        "kind": "ping",
        "outcome": "ok",
        "target": "10.0.0.2",
        "sent": 2,
        "received": 2,
    }
    assert check("vpcs", "ping 10.0.0.2", VPCS_REPLY_08).outcome == "ok"
    assert (
        check("vpcs", "ping 10.0.0.2 -P 17", "10.0.0.2 udp_seq=1 ttl=64 time=0.1 ms").outcome
        == "ok"
    )
    tcp = (
        "Connect   7@10.0.0.2 seq=1 ttl=64 time=1.058 ms\n"
        "SendData  7@10.0.0.2 seq=1 ttl=64 time=1.081 ms\n"
        "Close     7@10.0.0.2 seq=1 ttl=64 time=2.226 ms\n"
    )
    assert (
        check("vpcs", "ping 10.0.0.2 -c 1 -P 6", tcp).sent,
        check("vpcs", "ping 10.0.0.2 -c 1 -P 6", tcp).received,
    ) == (1, 1)
    half = check("vpcs", "ping 10.0.0.2 -c 2", "10.0.0.2 icmp_seq=1 timeout\n" + VPCS_REPLY_08)
    assert (half.outcome, half.sent, half.received, half.detail) == (
        "partial",
        2,
        1,
        "10.0.0.2 icmp_seq=1 timeout",
    )


def test_a_vpcs_trace_arrives_when_the_destination_answers() -> None:
    arrived = check(
        "vpcs",
        "trace 10.0.0.2",
        "trace to 10.0.0.2, 8 hops max, press Ctrl+C to stop\n"
        " 1   *10.0.0.2   0.185 ms (ICMP type:3, code:3, Destination port unreachable)\n",
    )
    assert (arrived.kind, arrived.outcome, arrived.reached) == ("trace", "ok", True)
    by_icmp = check(
        "vpcs",
        "trace 10.0.1.5 -P 1",
        "trace to 10.0.1.5, 2 hops max (ICMP), press Ctrl+C to stop\n"
        " 1   10.0.1.5   0.183 ms  0.134 ms  0.018 ms\n",
    )
    assert by_icmp.outcome == "ok"


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        ("trace to 10.0.1.2, 8 hops max, press Ctrl+C to stop\nNo gateway found\n", "no gateway"),
        (
            "trace to 10.0.0.9, 2 hops max, press Ctrl+C to stop\nhost (10.0.0.9) not reachable\n",
            "address not reachable",
        ),
        (
            "trace to 10.0.0.2, 2 hops max, press Ctrl+C to stop\n 1     *  *  *\n 2     *  *  *\n",
            "timeout",
        ),
        (
            "trace to 10.0.1.2, 8 hops max\n 1   10.0.0.254   1.0 ms\n"
            " 2   *10.0.0.254   1.2 ms (ICMP type:3, code:1, Destination host unreachable)\n",
            "destination unreachable",
        ),
    ],
)
def test_a_vpcs_trace_that_does_not_arrive_failed(output: str, problem: str) -> None:
    read = check("vpcs", "trace 10.0.1.2", output)
    assert (read.outcome, read.reached, read.problem) == ("failed", False, problem)


@pytest.mark.parametrize(
    ("command", "output", "outcome", "problem"),
    [
        (
            "ping 10.0.0.2",
            IOS_HEAD + "!!!!!\nSuccess rate is 100 percent (5/5), round-trip "
            "min/avg/max = 1/1/2 ms\n",
            "ok",
            None,
        ),
        (
            "ping 10.0.0.2",
            IOS_HEAD + ".!!!!\nSuccess rate is 80 percent (4/5), round-trip "
            "min/avg/max = 1/1/1 ms\n",
            "partial",
            "timeout",
        ),
        (
            "ping 10.0.0.2",
            IOS_HEAD + ".....\nSuccess rate is 0 percent (0/5)\n",
            "failed",
            "timeout",
        ),
        (
            "do ping 10.0.0.2 repeat 2",
            IOS_HEAD + "U.\nSuccess rate is 0 percent (0/2)\n",
            "failed",
            "destination unreachable",
        ),
        (
            "ping nosuch",
            'Translating "nosuch"...domain server (255.255.255.255)\n'
            "% Unrecognized host or address, or protocol not running.\n",
            "failed",
            "host not found",
        ),
        ("ping 10.0.0.2", "Type escape sequence to abort.\n", "failed", "no answer"),
    ],
)
def test_ios_pings_are_read_from_their_success_rate(
    command: str, output: str, outcome: str, problem: str | None
) -> None:
    read = check("cisco_ios", command, output)
    assert (read.outcome, read.problem) == (outcome, problem)


def test_ios_traceroutes() -> None:
    head = (
        "Type escape sequence to abort.\nTracing the route to 10.0.0.2\n"
        "VRF info: (vrf in name/id, vrf out name/id)\n"
    )
    assert (
        check(
            "cisco_ios", "traceroute 10.0.0.2", head + "  1 10.0.0.2 4 msec 0 msec 4 msec\n"
        ).outcome
        == "ok"
    )
    named = "Tracing the route to R2 (10.0.0.2)\n  1 R2 (10.0.0.2) 4 msec 0 msec 4 msec\n"
    assert check("cisco_ios", "tr R2", named).outcome == "ok"
    refused = check("cisco_ios", "traceroute 10.0.0.2", head + "  1 10.0.1.254 !H  *  !H \n")
    assert (refused.outcome, refused.problem, refused.detail) == (
        "failed",
        "destination unreachable",
        "host unreachable (!H)",
    )
    silent = check("cisco_ios", "traceroute 10.0.0.2", head + "  1  *  *  * \n  2  *  *  * \n")
    assert (silent.outcome, silent.problem) == ("failed", "timeout")


@pytest.mark.parametrize(
    ("command", "output", "problem"),
    [
        ("ping -c 1 10.9.0.2", IPUTILS_UNREACHABLE, "destination unreachable"),
        (
            "ping -c 2 -W 1 10.9.0.3",
            "PING 10.9.0.3 (10.9.0.3) 56(84) bytes of data.\n\n"
            "--- 10.9.0.3 ping statistics ---\n2 packets transmitted, 0 received, 100% packet "
            "loss, time 1022ms\n",
            "timeout",
        ),
        ("ping -c 1 192.0.2.9", "ping: connect: Network is unreachable\n", "network unreachable"),
        (
            "ping -c 1 nosuch.invalid",
            "ping: nosuch.invalid: Temporary failure in name resolution\n",
            "host not found",
        ),
        ("ping -c 1 nosuch", "ping: nosuch: Name or service not known\n", "host not found"),
        ("ping -c 1 nosuch", "ping: unknown host nosuch\n", "host not found"),
        (
            "busybox ping -c 1 nosuch.invalid",
            "ping: bad address 'nosuch.invalid'\n",
            "host not found",
        ),
        (
            "busybox ping -c 1 192.0.2.9",
            "PING 192.0.2.9 (192.0.2.9): 56 data bytes\nping: sendto: Network is unreachable\n",
            "network unreachable",
        ),
        (
            "sudo ping -c 1 -W 1 10.9.0.3",
            "PING 10.9.0.3 (10.9.0.3): 56 data bytes\n\n"
            "--- 10.9.0.3 ping statistics ---\n1 packets transmitted, 0 packets received, 100% "
            "packet loss\n",
            "timeout",
        ),
        (
            "ping6 -c 1 fe80::1",
            "PING fe80::1(fe80::1) 56 data bytes\nFrom "
            "fe80::d835:6dff:fec3:2ccc%v1 icmp_seq=1 Destination unreachable: Address "
            "unreachable\n\n--- fe80::1 ping statistics ---\n1 packets transmitted, 0 received, "
            "+1 errors, 100% packet loss, time 0ms\n",
            "destination unreachable",
        ),
    ],
)
def test_every_linux_ping_failure_is_a_failed_check(
    command: str, output: str, problem: str
) -> None:
    read = check("linux", command, output)
    assert (read.outcome, read.problem) == ("failed", problem)


def test_linux_ping_answers_are_counted() -> None:
    iputils = (
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.1 ms\n\n"
        "--- 10.0.0.2 ping statistics ---\n"
        "3 packets transmitted, 2 received, 33.3333% packet loss, time 2003ms\n"
    )
    read = check("linux", "ping -c 3 10.0.0.2", iputils)
    assert (read.outcome, read.sent, read.received, read.problem) == ("partial", 3, 2, "timeout")
    busybox = (
        "64 bytes from 127.0.0.1: seq=0 ttl=64 time=0.032 ms\n\n"
        "--- 127.0.0.1 ping statistics ---\n"
        "1 packets transmitted, 1 packets received, 0% packet loss\n"
    )
    assert check("linux", "busybox ping -c 1 127.0.0.1", busybox).outcome == "ok"


def test_linux_traceroutes() -> None:
    head = "traceroute to 10.9.0.2 (10.9.0.2), 2 hops max, 46 byte packets\n"
    host_unreachable = check(
        "linux",
        "busybox traceroute -n -m 2 10.9.0.2",
        head + " 1  *  *  *\n 2  10.9.0.1  71.990 ms !H  *  *\n",
    )
    assert (host_unreachable.outcome, host_unreachable.problem) == (
        "failed",
        "destination unreachable",
    )
    arrived = check("linux", "traceroute -n 10.9.0.2", head + " 1  10.9.0.2  0.006 ms  0.001 ms\n")
    assert arrived.outcome == "ok"
    no_route = check(
        "linux",
        "busybox traceroute -n 192.0.2.9",
        "traceroute: can't connect to remote host (192.0.2.9): Network is unreachable\n",
    )
    assert (no_route.outcome, no_route.problem) == ("failed", "network unreachable")
    unknown = check("linux", "traceroute nosuch", "traceroute: bad address 'nosuch'\n")
    assert unknown.problem == "host not found"


FRR_PING = (
    "PING 10.0.23.3 (10.0.23.3): 56 data bytes\n"
    "64 bytes from 10.0.23.3: seq=0 ttl=63 time=12.160 ms\n"
    "64 bytes from 10.0.23.3: seq=1 ttl=63 time=5.708 ms\n"
    "64 bytes from 10.0.23.3: seq=2 ttl=63 time=6.393 ms\n"
    "64 bytes from 10.0.23.3: seq=3 ttl=63 time=4.001 ms\n"
    "64 bytes from 10.0.23.3: seq=4 ttl=63 time=5.153 ms\n\n"
    "--- 10.0.23.3 ping statistics ---\n"
    "5 packets transmitted, 5 packets received, 0% packet loss\n"
    "round-trip min/avg/max = 4.001/6.683/12.160 ms\n"
)
"""An FRR router's vtysh `ping` (the lab kit's BusyBox wrapper), live in the routed lab."""


def test_frr_pings_are_read_as_the_busybox_ping_vtysh_runs() -> None:
    for command in ("ping 10.0.23.3", "ping ip 10.0.23.3", "pi 10.0.23.3"):
        read = check("frr", command, FRR_PING)
        assert (read.outcome, read.target, read.sent, read.received) == ("ok", "10.0.23.3", 5, 5)
    lost = FRR_PING.split("\n\n")[0].split("\n")[0] + (
        "\n\n--- 10.0.12.99 ping statistics ---\n"
        "5 packets transmitted, 0 packets received, 100% packet loss\n"
    )
    read = check("frr", "ping 10.0.12.99", lost)
    assert (read.outcome, read.sent, read.received, read.problem) == ("failed", 5, 0, "timeout")
    no_route = check(
        "frr",
        "ping 3.3.3.3",
        "PING 3.3.3.3 (3.3.3.3): 56 data bytes\nping: sendto: Network is unreachable\n",
    )
    assert (no_route.outcome, no_route.sent, no_route.problem) == (
        "failed",
        0,
        "network unreachable",
    )


def test_frr_traceroutes_arrive_when_the_destination_answers() -> None:
    arrived = check(
        "frr",
        "traceroute 192.168.3.10",
        "traceroute to 192.168.3.10 (192.168.3.10), 30 hops max, 46 byte packets\n"
        " 1  10.0.13.3 (10.0.13.3)  7.275 ms  2.009 ms  1.458 ms\n"
        " 2  192.168.3.10 (192.168.3.10)  2.403 ms  2.096 ms  2.038 ms\n",
    )
    assert (arrived.kind, arrived.outcome, arrived.target) == ("trace", "ok", "192.168.3.10")


@pytest.mark.parametrize(
    ("dialect", "command"),
    [
        ("vpcs", "show ip"),
        ("frr", "show ip route"),
        ("vpcs", "ip 10.0.0.1/24"),
        ("cisco_ios", "show ip route"),
        ("linux", "ip addr"),
        ("linux", "ping -c 1 10.0.0.2 | tail -1"),
        ("nonsense", "ping 10.0.0.2"),
    ],
)
def test_other_commands_are_no_checks(dialect: str, command: str) -> None:
    assert read_check(dialect, command, "anything 100% packet loss not reachable") is None
