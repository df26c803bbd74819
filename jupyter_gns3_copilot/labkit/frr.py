"""The lab's FRR router: FRRouting (zebra, staticd, ospfd, bgpd) under QEMU, from Debian.

Built like the Linux router (`router.py`: the same kernel, BusyBox and initramfs
machinery) plus Debian's `frr` 8.4 and its libraries, fetched with `apt-get download`
into the lab kit's cache (`<cache>/frr-debs`, never installed on this machine) and
unpacked with `dpkg-deb`. Its /init starts the daemons and watchfrr, then keeps vtysh on
the serial console (the node's GNS3 console): the console opens at `R1#` when the node's
kernel command line names it (`router.hostname_command_line`), else at `router#`.

Each node gets its own small disk (a linked clone of an empty ext4 qcow2 image, made
here with e2fsprogs): /init mounts it and keeps /etc/frr there, so `write memory`
survives a node stop/start.

`install_frr_router(gns3, cache_dir)` adds the GNS3 template `FRR_TEMPLATE`;
`RouterUnavailable` says what is missing.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from .locks import file_lock
from .router import (
    BOOT_STEPS,
    MODULES,
    QEMU,
    TEMPLATE_COMMAND_LINE,
    RouterImages,
    RouterUnavailable,
    blank_disk,
    busybox_archive,
    digest,
    find_busybox,
    find_kernel,
    install_template,
    libraries,
    run_tool,
)

FRR_TEMPLATE = "FRR router"
FRR_PACKAGES = (
    "frr",
    "libyang2",
    "libc-ares2",
    "libjson-c5",
    "libpcre2-8-0",
    "libreadline8",
    "libtinfo6",
    "libcap2",
    "libcrypt1",
    "libpam0g",
    "libaudit1",
    "libcap-ng0",
    "libc6",
)
"""Debian's FRR and the packages of the libraries its programs link."""
DAEMONS = ("zebra", "staticd", "ospfd", "bgpd")
PROGRAMS = (
    *(f"usr/lib/frr/{daemon}" for daemon in DAEMONS),
    "usr/lib/frr/watchfrr",
    "usr/bin/vtysh",
)
CONSOLE_DIALECT = "frr"
"""The console dialect the template names (`device_type:frr` in its usage notes)."""
PING_PROBES = 5
PING_SCRIPT = f"""#!/bin/sh
exec /bin/busybox ping -c {PING_PROBES} -i 0.2 -A -W 1 "$@"
"""
"""The `ping` vtysh runs (first on PATH): vtysh's `ping WORD` passes no count, and a
ping without one never stops; this one stops after 5 probes, as IOS's does. Each probe
goes as soon as the one before is answered (`-A`), or 0.2 s after it when it is not, and
the last waits 1 s: an answered ping takes milliseconds, an unanswered one under 2 s (IOS's
takes 10), so a lab check that pings from routers is as quick as one from PCs."""

PASSWD = "root:x:0:0:root:/root:/bin/sh\nfrr:x:100:101:FRRouting:/nonexistent:/bin/false\n"
GROUP = "root:x:0:\nfrr:x:101:\nfrrvty:x:102:frr\n"
VTYSH_CONF = "service integrated-vtysh-config\nusername root nopassword\n"
"""Debian's vtysh is built with PAM and refuses to start without the `username` line."""
VTYSH_LINES = VTYSH_CONF.replace("\n", "\\n")

INIT_SCRIPT = f"""\
#!/bin/sh
export PATH=/usr/local/bin:/bin:/usr/bin:/usr/lib/frr
{BOOT_STEPS}echo 1 > /proc/sys/net/ipv4/ip_forward
echo 1 > /proc/sys/net/ipv6/conf/all/forwarding
ip link set lo up
for device in /sys/class/net/eth*; do ip link set "${{device##*/}}" up; done
mkdir -p /disk
mount -t ext4 -o sync /dev/vda /disk 2>/dev/null
mkdir -p /disk/frr /var/run/frr /var/tmp/frr /var/log/frr
ln -s /disk/frr /etc/frr
printf '{VTYSH_LINES}' > /etc/frr/vtysh.conf
[ -f /etc/frr/frr.conf ] || echo '!' > /etc/frr/frr.conf
chown -R frr:frr /disk/frr /var/run/frr /var/tmp/frr /var/log/frr
chown frr:frrvty /etc/frr/vtysh.conf
syslogd -C64
zebra -d -F traditional -A 127.0.0.1 -s 90000000 >/dev/null 2>&1
for daemon in {" ".join(DAEMONS[1:])}; do
    "$daemon" -d -F traditional -A 127.0.0.1 >/dev/null 2>&1
done
watchfrr -d -F traditional {" ".join(DAEMONS)} >/dev/null 2>&1
[ "$(cat /etc/frr/frr.conf)" = '!' ] || vtysh -b >/dev/null 2>&1
while true; do setsid cttyhack vtysh; done
"""
"""The FRR router's /init: interfaces up, the node's disk as /etc/frr, the daemons under
watchfrr with the saved configuration applied (`vtysh -b`, skipped while there is none: it
costs half a second of an emulated CPU), vtysh on the serial console for good."""


def install_frr_router(gns3: httpx.Client, cache_dir: Path) -> RouterImages:
    """Build the FRR router's images (fetching Debian's packages into `cache_dir` when
    missing), upload them and add (or update) the GNS3 template `FRR_TEMPLATE`."""
    images = build_frr_images(cache_dir)
    install_template(gns3, images.files, frr_template_body(images))
    return images


TCG_OPTIONS = "-accel tcg,tb-size=32"
"""QEMU options of the FRR router: a 32 MB translation cache (see `frr_template_body`)."""


def frr_template_body(images: RouterImages) -> dict[str, object]:
    """The GNS3 template of the FRR router: the Linux router's kernel, the FRR initramfs,
    4 virtio ports, a telnet console and a disk of its own (`images.disk`)."""
    return {
        "name": FRR_TEMPLATE,
        "template_type": "qemu",
        "compute_id": "local",
        "category": "router",
        "symbol": ":/symbols/classic/router.svg",
        "default_name_format": "R{0}",
        "usage": f"device_type:{CONSOLE_DIALECT}. An FRRouting 8.4 router (zebra, staticd, "
        "ospfd, bgpd): vtysh on its console; ports e0-e3 are eth0-eth3; addresses in CIDR "
        "(ip address 10.0.0.1/24); write memory keeps the configuration.",
        "qemu_path": QEMU,
        "platform": "x86_64",
        "ram": 256,
        "cpus": 1,
        # QEMU without KVM gives its translation cache up to 1 GB, backed as it fills:
        # 32 MB keeps a router under 300 MB of memory (385 MB before), idle just as cheap.
        "options": TCG_OPTIONS,
        "adapters": 4,
        "adapter_type": "virtio-net-pci",
        "console_type": "telnet",
        "kernel_image": images.kernel,
        "initrd": images.initrd,
        "kernel_command_line": TEMPLATE_COMMAND_LINE,
        "hda_disk_image": images.disk,
        "hda_disk_interface": "virtio",
        "create_config_disk": False,
        "linked_clone": True,
        "on_close": "power_off",
    }


def build_frr_images(cache_dir: Path) -> RouterImages:
    """The kernel, the FRR initramfs and the blank disk image (module docstring)."""
    busybox = find_busybox()
    kernel, modules_dir = find_kernel()
    root = unpacked_frr(cache_dir)
    archive = busybox_archive(busybox, modules_dir, (*MODULES, "virtio_blk"))
    for folder in ("disk", "var", "var/run", "var/tmp", "var/log", "usr", "usr/bin"):
        archive.directory(folder)
    archive.parents(Path("/usr/local/bin/ping"))
    archive.file("usr/local/bin/ping", PING_SCRIPT.encode(), mode=0o755)
    archive.file("etc/passwd", PASSWD.encode())
    archive.file("etc/group", GROUP.encode())
    search = [root / "usr/lib/x86_64-linux-gnu/frr", root / "usr/lib/x86_64-linux-gnu"]
    search += [root / "lib/x86_64-linux-gnu"]
    for program in PROGRAMS:
        archive.parents(Path("/") / program)
        archive.file(program, (root / program).read_bytes(), mode=0o755)
        for library in libraries(root / program, search):
            inside = library.relative_to(root) if library.is_relative_to(root) else library
            archive.parents(Path("/") / inside)
            archive.file(str(inside).lstrip("/"), library.read_bytes(), mode=0o755)
    archive.file("init", INIT_SCRIPT.encode(), mode=0o755)
    # Not compressed: unpacking gzip on an emulated CPU costs each boot about a second.
    initrd_data = archive.finish()
    kernel_data = kernel.read_bytes()
    disk_name, disk_data = blank_disk()
    names = {
        "kernel": f"linux-router-vmlinuz-{digest(kernel_data)}",
        "initrd": f"frr-router-initrd-{digest(initrd_data)}.cpio",
        "disk": disk_name,
    }
    return RouterImages(
        kernel=names["kernel"],
        initrd=names["initrd"],
        disk=names["disk"],
        files={
            names["kernel"]: kernel_data,
            names["initrd"]: initrd_data,
            names["disk"]: disk_data,
        },
    )


def unpacked_frr(cache_dir: Path) -> Path:
    """Debian's FRR packages (`FRR_PACKAGES`) unpacked (`dpkg-deb -x`) into
    `<cache>/frr-root`; the .debs are downloaded with `apt-get download` into
    `<cache>/frr-debs` the first time."""
    debs, root = cache_dir / "frr-debs", cache_dir / "frr-root"
    with file_lock(cache_dir / "frr-debs.lock", 600, "another process is fetching FRR"):
        if not _has_all(debs):
            debs.mkdir(parents=True, exist_ok=True)
            fetched = run_tool(["apt-get", "download", "-q", *FRR_PACKAGES], cwd=debs)
            if not _has_all(debs):
                raise RouterUnavailable(f"apt-get download of frr failed: {fetched[-300:]}")
        stamp = root / ".debs"
        listing = "\n".join(deb.name for deb in sorted(debs.glob("*.deb")))
        if not (stamp.is_file() and stamp.read_text() == listing):
            for deb in sorted(debs.glob("*.deb")):
                run_tool(["dpkg-deb", "-x", str(deb), str(root)])
            stamp.write_text(listing)
    return root


def _has_all(folder: Path) -> bool:
    return all(any(folder.glob(f"{package}_*.deb")) for package in FRR_PACKAGES)
