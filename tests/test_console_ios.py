"""Console sessions, locks and fan-out against a scripted Cisco-IOS-like TEST DOUBLE.

No IOS image can run here, so the `cisco_ios` dialect is exercised against
`jupyter_gns3_copilot.testing.ios_double.IOSDouble`: a real telnet server on 127.0.0.1
(telnetlib3's server side) that scripts IOS prompts, paging, questions, login and enable.
It is a test double, not IOS. The same file covers the parts that need no device at all
(dialect resolution, targets from GNS3 nodes, terminal-text cleaning) and the Linux shell
dialect against a real /bin/sh on a pseudo-terminal behind a telnetlib3 server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket

import pytest
from support.consoles import linux_shell

from jupyter_gns3_copilot.console import (
    ConsoleAuthError,
    ConsoleCredentials,
    ConsolePool,
    ConsoleSession,
    ConsoleTarget,
    ConsoleTargetError,
    ConsoleTimeoutError,
    DialectError,
    clean_terminal_text,
    resolve_dialect,
    run_many,
    wait_ready,
)
from jupyter_gns3_copilot.console.dialects import dialect_by_name
from jupyter_gns3_copilot.console.pool import _locked, abortable
from jupyter_gns3_copilot.console.text import TerminalText
from jupyter_gns3_copilot.gns3 import Node, Template
from jupyter_gns3_copilot.testing.ios_double import IOSDouble

FIRST = [f"ping 10.0.0.{n}" for n in range(1, 5)]
SECOND = [f"ping 10.0.1.{n}" for n in range(1, 5)]
SLOW_PINGS = dict.fromkeys(FIRST + SECOND, 0.02)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def seen_closed(pool: ConsolePool, target: ConsoleTarget) -> None:
    """Return once the pool's kept session for `target` has read the device's close.

    Reaches into the pool: no public API waits for a peer's close, and the test must not
    guess it with a sleep.
    """
    session = pool._sessions[target.key]
    assert session.line._reading is not None  # a kept session listens while idle
    await asyncio.wait({session.line._reading}, timeout=5)
    assert not session.is_open


# -- one session on the IOS double -------------------------------------------------------


async def test_show_output_is_clean_and_paging_is_turned_off() -> None:
    async with IOSDouble() as device, ConsoleSession(device.target()) as console:
        assert console.prompt == "R1#"
        result = await console.send("show version")

    assert result.ok and result.error is None and result.prompt == "R1#"
    lines = result.output.splitlines()
    assert lines[0].startswith("Cisco IOS Software, IOS-like TEST DOUBLE")
    assert lines[-1] == "Configuration register is 0x0"
    assert "show version" not in result.output and "R1#" not in result.output
    assert not any(char in result.output for char in "\r\x1b\b")
    assert device.commands == ["enable", "terminal length 0", "show version"]
    assert device.pages_shown == 0


async def test_more_pages_are_advanced_and_the_markers_removed() -> None:
    async with IOSDouble() as plain, ConsoleSession(plain.target()) as console:
        unpaged = await console.send("show running-config")
    async with (
        IOSDouble(ignore_terminal_length=True) as device,
        ConsoleSession(device.target()) as console,
    ):
        paged = await console.send("sh run")

    assert device.pages_shown >= 1
    assert paged.output == unpaged.output
    assert paged.output.splitlines()[0] == "Building configuration..."
    assert paged.output.splitlines()[-1] == "end"
    assert "More" not in paged.output


async def test_questions_are_answered_yes_or_declined() -> None:
    async with IOSDouble() as device, ConsoleSession(device.target()) as console:
        await console.configure(["hostname R9"])
        declined = await console.send("reload", confirm=False)
        accepted = await console.send("reload")
        copied = await console.send("copy running-config startup-config")

    assert console.prompt == "R9#"
    assert "Save? [yes/no]: no" in declined.output
    assert "Proceed with reload? [confirm]" in declined.output
    assert "Reload requested" not in declined.output
    assert "Save? [yes/no]: yes\nBuilding configuration...\n[OK]" in accepted.output
    assert "Reload requested" in accepted.output
    assert copied.output.splitlines() == [
        "Destination filename [startup-config]?",
        "Building configuration...",
        "[OK]",
    ]


async def test_enable_uses_the_enable_password() -> None:
    async with IOSDouble(enable_password="s3cret") as device:
        right = ConsoleCredentials(enable_password="s3cret")
        async with ConsoleSession(device.target(credentials=right)) as console:
            assert console.prompt == "R1#"

        with pytest.raises(ConsoleAuthError, match="asks for an enable password"):
            await ConsoleSession(device.target()).open()
        wrong = ConsoleCredentials(enable_password="guess")
        with pytest.raises(ConsoleAuthError, match=r"enable password .* was refused") as caught:
            await ConsoleSession(device.target(credentials=wrong)).open()
    assert "% Bad secrets" in str(caught.value)
    assert "guess" not in str(caught.value)


async def test_login_prompts_are_answered_from_the_credentials() -> None:
    async with IOSDouble(username="admin", password="cisco") as device:
        good = ConsoleCredentials(username="admin", password="cisco")
        async with ConsoleSession(device.target(credentials=good)) as console:
            result = await console.send("show clock")
        assert result.ok and result.output == "*00:00:42.123 UTC Mon Mar 1 1993"

        bad = ConsoleCredentials(username="admin", password="nope")
        with pytest.raises(ConsoleAuthError, match="refused the login"):
            await ConsoleSession(device.target(credentials=bad)).open()
        with pytest.raises(ConsoleAuthError, match="asks for a username"):
            await ConsoleSession(device.target()).open()


async def test_configuration_mode_helpers() -> None:
    async with IOSDouble() as device, ConsoleSession(device.target()) as console:
        results = await console.configure(
            ["interface Gi0/1", "ip address 192.0.2.1 255.255.255.0", "no shutdown", "no such"]
        )
        after_configure = console.prompt
        brief = await console.send("show ip interface brief")
        await console.enter_config()
        inside = console.prompt
        await console.exit_config()

    assert [r.prompt for r in results] == [
        "R1(config)#",
        "R1(config-if)#",
        "R1(config-if)#",
        "R1(config-if)#",
    ]
    assert [r.ok for r in results] == [True, True, True, False]
    assert results[3].error == "% Invalid input detected at '^' marker."
    assert after_configure == "R1#" and inside == "R1(config)#" and console.prompt == "R1#"
    assert "GigabitEthernet0/1         192.0.2.1       YES manual up" in brief.output
    # IOS prints "%SYS-5-CONFIG_I" late, before the next command: not that command's output.
    assert "CONFIG_I" not in brief.output


async def test_an_overdue_command_is_interrupted_and_the_console_stays_usable() -> None:
    async with (
        IOSDouble(delays={"show clock": 30}) as device,
        ConsoleSession(device.target(), interrupt_timeout=5) as console,
    ):
        with pytest.raises(ConsoleTimeoutError) as caught:
            await console.send("show clock", timeout=0.3)
        assert console.is_open and console.prompt == "R1#"
        after = await console.send("show version")
    assert str(caught.value) == (
        "R1: no prompt within 0.3 s after 'show clock'; interrupted it (Ctrl-Shift-6), and "
        "the console is back at its prompt."
    )
    assert caught.value.partial_output == ""
    assert device.interrupts == ["\x1e"]  # the break sequence was enough
    assert after.ok and after.output.startswith("Cisco IOS Software")


async def test_a_device_deaf_to_interrupts_is_closed_with_advice() -> None:
    async with (
        IOSDouble(delays={"show clock": 30}, unbreakable={"show clock"}) as device,
        ConsoleSession(device.target(), interrupt_timeout=0.4) as console,
    ):
        with pytest.raises(ConsoleTimeoutError) as caught:
            await console.send("show clock", timeout=0.3)
        assert not console.is_open
    assert device.interrupts == ["\x1e", "\x03"]
    message = str(caught.value)
    assert message.startswith(
        "R1: no prompt within 0.3 s after 'show clock'; it did not come back to its prompt "
        "within 0.4 s after Ctrl-Shift-6 then Ctrl-C, so the console was closed."
    )
    assert "reload the node (the reload_nodes tool, or Reload in GNS3)" in message


async def test_a_cancelled_command_is_interrupted_before_the_cancellation_ends() -> None:
    async with IOSDouble(delays={"show clock": 30}) as device, ConsolePool() as pool:
        target = device.target()
        running = asyncio.ensure_future(pool.run(target, ["show clock"]))
        await device.wait_for_command("show clock")
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert device.interrupts == ["\x1e"]
        after = await pool.run(target, ["show version"])
    assert after.status == "success"
    assert [entry.connection for entry in device.received][-1] == 1  # the same session


async def test_overlong_and_multi_line_commands_never_reach_the_console() -> None:
    async with IOSDouble() as device, ConsoleSession(device.target()) as console:
        with pytest.raises(ValueError, match="at most 512 characters; this one has 100000"):
            await console.send("x" * 100_000)
        with pytest.raises(ValueError, match="Send one line at a time"):
            await console.send("show clock\nshow version")
        assert (await console.send("show clock")).ok
    assert device.commands == ["enable", "terminal length 0", "show clock"]


# -- the pool: locks, fan-out, readiness ---------------------------------------------------


@pytest.mark.parametrize("keep_open", [True, False])
async def test_two_callers_on_one_console_take_turns(keep_open: bool) -> None:
    async with IOSDouble(delays=SLOW_PINGS) as device, ConsolePool(keep_open=keep_open) as pool:
        results = await asyncio.gather(
            pool.run(device.target(), FIRST), pool.run(device.target("R1 again"), SECOND)
        )
    assert [r.status for r in results] == ["success", "success"]
    pings = [command for command in device.commands if command.startswith("ping")]
    assert pings in (FIRST + SECOND, SECOND + FIRST)


async def test_without_the_pool_two_sessions_would_interleave() -> None:
    """The control for the test above: the double does record interleaving."""

    async def send_all(console: ConsoleSession, commands: list[str]) -> None:
        for command in commands:
            await console.send(command)

    async with (
        IOSDouble(delays=SLOW_PINGS) as device,
        ConsoleSession(device.target()) as one,
        ConsoleSession(device.target()) as two,
    ):
        await asyncio.gather(send_all(one, FIRST), send_all(two, SECOND))
    pings = [command for command in device.commands if command.startswith("ping")]
    assert sorted(pings) == sorted(FIRST + SECOND)
    assert pings not in (FIRST + SECOND, SECOND + FIRST)


async def test_run_many_keeps_input_order_and_reports_statuses() -> None:
    nowhere = ConsoleTarget(name="R4", host="127.0.0.1", port=closed_port(), dialect="cisco_ios")
    async with (
        IOSDouble(hostname="R1") as r1,
        IOSDouble(hostname="R2", delays={"show clock": 0.2}) as r2,
        IOSDouble(hostname="R3", delays={"show clock": 30}) as r3,
    ):
        results = await run_many(
            [
                (r2.target(), ["show clock", "show ip interface brief"]),
                (nowhere, ["show clock"]),
                (r1.target(), ["show clock", "show bogus", "show version"]),
                (r3.target(), ["show version", "show clock", "show ip interface brief"]),
            ],
            per_command_timeout=0.5,
        )

    assert [r.device_name for r in results] == ["R2", "R4", "R1", "R3"]
    statuses = [r.status for r in results]
    assert statuses == ["success", "failed", "partial_success", "partial_success"]
    slow, refused, rejected, timed_out = results
    assert slow.error is None
    assert slow.output.startswith(
        "R2# show clock\n*00:00:42.123 UTC Mon Mar 1 1993\n\nR2# show ip interface brief\nInterface"
    )
    assert refused.output == "" and "R4: console 127.0.0.1:" in (refused.error or "")
    assert "refused the connection. Is the node started?" in (refused.error or "")
    assert rejected.error == "show bogus: % Invalid input detected at '^' marker."
    assert "\n\nR1# show version\nCisco IOS Software" in rejected.output
    assert (timed_out.error or "").splitlines() == [
        "show clock: R3: no prompt within 0.5 s after 'show clock'; interrupted it "
        "(Ctrl-Shift-6), and the console is back at its prompt.",
        "not run after that: show ip interface brief",
    ]
    assert timed_out.output.startswith("R3# show version\nCisco IOS Software")
    assert json.loads(json.dumps([r.model_dump(exclude_none=True) for r in results]))[1] == {
        "device_name": "R4",
        "status": "failed",
        "output": "",
        "error": refused.error,
        "commands": ["show clock"],
    }


async def test_an_abort_stops_waiting_at_once() -> None:
    async with IOSDouble(delays={"show clock": 30}) as device:
        abort = asyncio.Event()
        running = asyncio.ensure_future(
            run_many(
                [(device.target(), ["show version", "show clock", "show version"])],
                per_command_timeout=60,
                abort_event=abort,
            )
        )
        await device.wait_for_command("show clock")
        abort.set()
        [result] = await asyncio.wait_for(running, 5)
    assert result.status == "partial_success"
    assert result.error == (
        "show clock: Stopped: the request was aborted. The command was interrupted and the "
        "console is back at its prompt.\nnot run after that: show version"
    )
    assert device.interrupts == ["\x1e"]


async def test_every_run_starts_outside_configuration_mode() -> None:
    async with IOSDouble() as device, ConsolePool() as pool:
        target = device.target()
        left_in_config = await pool.run(target, ["configure terminal", "hostname R7"])
        shown = await pool.run(target, ["show clock"])
    assert left_in_config.output.splitlines()[-1] == "R1(config)# hostname R7"
    assert shown.output.startswith("R7# show clock\n")
    assert device.commands[-2:] == ["end", "show clock"]


async def test_a_dropped_console_is_reconnected_transparently() -> None:
    async with IOSDouble() as device, ConsolePool() as pool:
        first = await pool.run(device.target(), ["show clock"])
        device.drop_connections()  # as a node restart does
        await seen_closed(pool, device.target())
        second = await pool.run(device.target(), ["show clock"])
        third = await pool.run(device.target(), ["show clock"])
    assert [r.status for r in (first, second, third)] == ["success"] * 3
    assert [(entry.connection, entry.line) for entry in device.received] == [
        (1, "enable"),
        (1, "terminal length 0"),
        (1, "show clock"),
        (2, "enable"),
        (2, "terminal length 0"),
        (2, "show clock"),
        (2, "show clock"),
    ]


async def test_wait_ready_polls_until_the_console_answers() -> None:
    port = closed_port()
    target = ConsoleTarget(name="R1", host="127.0.0.1", port=port, dialect="cisco_ios")
    device = IOSDouble(port=port)
    messages: list[str] = []
    refused = asyncio.Event()

    def progress(_: float, message: str) -> None:
        messages.append(message)
        refused.set()

    async def boot() -> None:
        await refused.wait()  # the device comes up after wait_ready found it down
        await device.start()

    booting = asyncio.ensure_future(boot())
    try:
        seconds = await wait_ready(target, timeout=10, poll_interval=0.05, progress=progress)
    finally:
        await booting
        await device.aclose()
    assert seconds > 0
    assert messages[-1] == "R1 is ready"
    assert messages[0].startswith("waiting for R1's console: R1: console 127.0.0.1:")
    assert "refused the connection" in messages[0]


async def test_wait_ready_gives_up_with_a_clear_error() -> None:
    target = ConsoleTarget(name="R1", host="127.0.0.1", port=closed_port(), dialect="vpcs")
    with pytest.raises(ConsoleTimeoutError) as caught:
        await wait_ready(target, timeout=0.5, poll_interval=0.1)
    message = str(caught.value)
    assert message.startswith(f"R1: console {target.key} showed no prompt within 0.5 s;")
    assert "is the node started" in message and "refused the connection" in message


# -- Linux shell dialect: a real /bin/sh on a real pty, behind a telnetlib3 server ---------


async def test_linux_dialect_on_a_real_shell() -> None:
    async with linux_shell() as target:
        [result] = await run_many(
            [(target, ["echo hello", r"printf '\033[31mred\033[0m\n'", "no-such-command"])]
        )
    assert result.status == "partial_success"
    assert result.output.split("\n\n")[:2] == [
        "$ echo hello\nhello",
        "$ printf '\\033[31mred\\033[0m\\n'\nred",
    ]
    assert (result.error or "").startswith("no-such-command: /bin/sh: ")
    assert (result.error or "").endswith("no-such-command: not found")


async def test_an_overdue_shell_command_is_stopped_with_ctrl_c() -> None:
    async with linux_shell() as target, ConsolePool() as pool:
        [late] = await pool.run_many([(target, ["sleep 600"])], per_command_timeout=0.5)
        after = await pool.run(target, ["echo $((6 * 7))"])
    assert late.status == "failed"
    assert late.error == (
        "sleep 600: host1: no prompt within 0.5 s after 'sleep 600'; interrupted it (Ctrl-C), "
        "and the console is back at its prompt."
    )
    assert after.status == "success" and after.output == "$ echo $((6 * 7))\n42"


# -- no device needed ---------------------------------------------------------------------


def test_dialect_comes_from_override_then_device_type_then_node_type() -> None:
    assert resolve_dialect("vpcs").name == "vpcs"
    assert resolve_dialect("iou").name == "cisco_ios"
    assert resolve_dialect("dynamips").name == "cisco_ios"
    assert resolve_dialect("docker").name == "linux"
    usage = {"usage": "Login with admin/cisco.\ndevice_type: cisco_ios_telnet"}
    assert resolve_dialect("qemu", properties=usage).name == "cisco_ios"
    assert resolve_dialect("qemu", tags=["device_type:linux"], properties=usage).name == "linux"
    assert resolve_dialect("qemu", properties=usage, override="vpcs").name == "vpcs"


def test_a_template_note_tells_the_dialect_after_the_nodes_own() -> None:
    template = ["Appliance notes.\ndevice_type:cisco_ios"]
    assert resolve_dialect("qemu", inherited=template).name == "cisco_ios"
    own = {"usage": "device_type:linux"}
    assert resolve_dialect("qemu", properties=own, inherited=template).name == "linux"


@pytest.mark.parametrize(
    "tag", ["device_type:frr", "device_type:FRR", "device_type:frr_vtysh", "device_type:vtysh"]
)
def test_an_frr_router_is_tagged_frr_or_a_common_spelling_of_it(tag: str) -> None:
    """The `frr` dialect: GNS3 3.1's FRR skill name and plain `vtysh` spell it too."""
    assert resolve_dialect("qemu", properties={"usage": f"{tag}. An FRR router"}).name == "frr"


def test_the_frr_dialect_reads_vtysh_prompts_and_error_lines() -> None:
    """Lower-case names and every sub-mode are prompts; sub-modes are configuration mode;
    vtysh's own complaints are error lines, a `% ` note in show output is not."""
    frr = resolve_dialect("qemu", tags=["device_type:frr"])
    for prompt in ("r1#", "R1(config)#", "r1(config-router)#", "edge-1(config-if)#"):
        match = frr.prompt.search(f"Hello, this is FRRouting (version 8.4.4).\n\n{prompt}")
        assert match and match.group("prompt") == prompt
    assert frr.in_config_mode("r1(config-router-af)#") and not frr.in_config_mode("r1#")
    assert frr.setup_commands == ("terminal length 0",) and frr.config_exit == "end"
    assert frr.error is not None
    for line in ("% Unknown command: ip address 1.2.3.4 255.0.0.0", "% Command incomplete: router"):
        assert frr.error.search(f"{line}\n")
    assert frr.error.search("% Ambiguous command: sh i\n")
    assert not frr.error.search("% No BGP neighbors found in VRF default\n")


def test_a_device_type_the_copilot_does_not_know_gives_way_to_the_node_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """GNS3 3.1's built-in VPCS template is tagged `device_type:gns3_vpcs_telnet`: a node
    of it speaks VPCS by its type; the server log says the tag was not used."""
    tag = ["device_type:gns3_vpcs_telnet"]
    assert resolve_dialect("vpcs", tags=tag).name == "vpcs"
    assert resolve_dialect("vpcs", inherited=tag).name == "vpcs"
    assert resolve_dialect("vpcs", properties={"usage": "device_type: gns3_vpcs"}).name == "vpcs"
    with caplog.at_level(logging.INFO, logger="jupyter_gns3_copilot.console.dialects"):
        assert resolve_dialect("docker", tags=["device_type:gns3_docker_telnet"]).name == "linux"
    assert "'gns3_docker_telnet' is not one of cisco_ios, frr, linux, vpcs" in caplog.text
    assert "using the docker node type's dialect, linux" in caplog.text
    with pytest.raises(DialectError, match="Unknown console dialect 'gns3_qemu_telnet'"):
        resolve_dialect("qemu", tags=["device_type:gns3_qemu_telnet"])


def test_gns3_31_netmiko_device_type_names_the_dialect_below_a_device_type_tag() -> None:
    """GNS3 3.1 sends a node's (and a template's) `netmiko_device_type`: a QEMU node with
    `cisco_ios` or `linux` there speaks that dialect, the node's own before its template's;
    a `device_type:` tag, its template's included, still decides first; a Netmiko type
    without a dialect here (`vyos`) is passed over, down to the node type."""
    ios = Node.model_validate(
        {
            "node_id": "0b4d2a3e-0000-4000-8000-000000000009",
            "name": "R9",
            "node_type": "qemu",
            "console": 5009,
            "console_host": "127.0.0.1",
            "console_type": "telnet",
            "netmiko_device_type": "cisco_ios",
        }
    )
    assert ios.netmiko_device_type == "cisco_ios"
    assert ConsoleTarget.from_node(ios).dialect == "cisco_ios"
    assert ConsoleTarget.from_node(ios, inherited_netmiko="linux").dialect == "cisco_ios"
    assert ConsoleTarget.from_node(ios, inherited=["device_type:frr"]).dialect == "frr"
    plain = ios.model_copy(update={"netmiko_device_type": None})
    assert ConsoleTarget.from_node(plain, inherited_netmiko="linux").dialect == "linux"
    template = Template.model_validate(
        {"template_id": "t", "name": "VyOS", "template_type": "qemu", "netmiko_device_type": "vyos"}
    )
    assert template.netmiko_device_type == "vyos"
    with pytest.raises(DialectError, match="device_type:<dialect>"):
        ConsoleTarget.from_node(plain, inherited_netmiko=template.netmiko_device_type)
    assert resolve_dialect("docker", netmiko_device_types=["vyos", None]).name == "linux"


def test_unknown_dialects_say_how_to_tag_the_node() -> None:
    with pytest.raises(DialectError) as caught:
        resolve_dialect("qemu", node_name="R1")
    assert "node 'R1' (type qemu)" in str(caught.value)
    assert "device_type:<dialect> in the node's usage notes" in str(caught.value)
    with pytest.raises(DialectError, match="known dialects: cisco_ios, frr, linux, vpcs"):
        resolve_dialect("qemu", tags=["device_type:junos"])


def test_console_target_from_a_gns3_node() -> None:
    node = Node(
        node_id="0b4d2a3e-0000-4000-8000-000000000001",
        name="R1",
        node_type="qemu",
        console=5000,
        console_host="0.0.0.0",
        console_type="telnet",
        properties={"usage": "device_type:cisco_ios"},
    )
    target = ConsoleTarget.from_node(node, server_host="gns3.example.org")
    assert target == ConsoleTarget(
        name="R1", host="gns3.example.org", port=5000, dialect="cisco_ios"
    )
    assert target.key == "gns3.example.org:5000"
    secret = ConsoleTarget.from_node(
        node, "ios", credentials=ConsoleCredentials(username="u", password="pa55-xyz")
    )
    assert secret.host == "127.0.0.1" and "credentials" not in secret.model_dump()
    assert "pa55-xyz" not in repr(secret)

    with pytest.raises(ConsoleTargetError, match="console type vnc; only telnet"):
        ConsoleTarget.from_node(node.model_copy(update={"console_type": "vnc"}))
    with pytest.raises(ConsoleTargetError, match="has no console port"):
        ConsoleTarget.from_node(node.model_copy(update={"console": None}))
    switch = node.model_copy(update={"node_type": "ethernet_switch", "console_type": "none"})
    with pytest.raises(ConsoleTargetError, match="console type none"):
        ConsoleTarget.from_node(switch)


def test_terminal_text_is_cleaned_incrementally() -> None:
    raw = (
        "\x1b[1mshow\x1b[0m ip\r\r\n\x1b]0;title\x07li--More-- \b\b\b\b\b\b\b\b\bne\r\n"
        "\x1b[?2004h\rPC1> \x07"
    )
    assert clean_terminal_text(raw) == "show ip\nline\nPC1> "
    screen = TerminalText()
    for index in range(0, len(raw), 3):
        screen.feed(raw[index : index + 3])
    assert screen.text == clean_terminal_text(raw)


def test_vtysh_log_lines_after_its_prompt_are_dropped_so_the_prompt_stands() -> None:
    """vtysh logs a warning after its prompt when a command ran long (FRR 8.4, seen on
    the lab's routers after a ping without answer) and does not print its prompt again:
    the FRR dialect drops that line, so the prompt ends the text and the command ends."""
    frr = dialect_by_name("frr")
    raw = (
        "ping 10.0.12.99\r\nPING 10.0.12.99 (10.0.12.99): 56 data bytes\r\n"
        "5 packets transmitted, 0 packets received, 100% packet loss\r\n"
        "R1# 2026/12/06 19:17:07 [PHJDC-499N2][EC 100663314] STARVATION: task "
        "vtysh_rl_read (55d1a2b3c4d5) ran for 6081ms (cpu time 0ms)\r\n"
    )
    screen = TerminalText(frr.log_line)
    for index in range(0, len(raw), 7):
        screen.feed(raw[index : index + 7])
    assert screen.text.endswith("packet loss\nR1#")
    match = frr.prompt.search(screen.text)
    assert match is not None and match["prompt"] == "R1#"
    assert TerminalText().text == "" and dialect_by_name("cisco_ios").log_line is None


async def test_a_caller_cancelled_as_the_lock_is_granted_does_not_keep_it() -> None:
    """Given a console lock granted to a waiter in the same instant its turn is cancelled,
    when the cancellation wins, then the lock is free again (no console stays locked)."""
    pool = ConsolePool()
    target = ConsoleTarget(name="R1", host="127.0.0.1", port=1, dialect="cisco_ios")
    lock = pool.lock(target)
    await lock.acquire()
    abort = asyncio.Event()

    async def waiter() -> None:
        async with _locked(lock, abort):
            raise AssertionError("the cancelled caller must not run with the lock")

    task = asyncio.ensure_future(waiter())
    await asyncio.sleep(0)  # the waiter now waits for the lock
    lock.release()
    await asyncio.sleep(0)  # the lock is granted to the waiter's acquire...
    task.cancel()  # ...and its caller is cancelled before it resumes
    with contextlib.suppress(asyncio.CancelledError):
        await task

    assert not lock.locked()


async def test_a_caller_cancelled_twice_still_waits_for_the_command_to_wind_down() -> None:
    """Given a console command that needs a moment to interrupt itself when cancelled; when
    its caller is cancelled twice meanwhile; then the caller ends only after the command has
    wound down (so the console's lock is never released under a command still running)."""
    release, wound_down = asyncio.Event(), asyncio.Event()

    async def command() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await release.wait()  # typing Ctrl-C and waiting for the prompt
            wound_down.set()
            raise

    caller = asyncio.ensure_future(abortable(command(), asyncio.Event()))
    for _ in range(2):
        await asyncio.sleep(0)
        caller.cancel()
    await asyncio.sleep(0)
    assert not caller.done()

    release.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert wound_down.is_set()
