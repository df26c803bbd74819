"""The lab's Linux router: a QEMU node that forwards packets between subnets for real.

No router image (IOS, IOU) can run here and the Dynamips stand-in emulates switches and
hubs only, so a lab that routes needs another router: Debian's cloud kernel booted by
QEMU from a small BusyBox initramfs. Its console is a BusyBox shell (`R1# `), its
interfaces `eth0`, `eth1`, ... are the node's ports e0, e1, ... (virtio), and it is
configured as any Linux router is: `ip addr add`, `ip route add`,
`sysctl -w net.ipv4.ip_forward=1` (forwarding is off at boot, as on a fresh Linux box).

`install_router(gns3)` builds the kernel and initramfs, uploads them to the lab's images
(content-addressed names: a new kernel makes new images) and adds the GNS3 template
`ROUTER_TEMPLATE`, whose usage notes tell the copilot its console speaks the `linux`
dialect; `RouterUnavailable` says what is missing (`make system-deps` installs
qemu-system-x86, qemu-utils and linux-image-cloud-amd64).

QEMU runs without hardware acceleration: the lab's `/dev/kvm` may be a paravirtual one
(PVM) that boots no stock kernel, and emulation boots this one in about 10 s.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import lzma
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx

from .errors import LabError

ROUTER_TEMPLATE = "Linux router"
QEMU = "qemu-system-x86_64"
MODULES = ("virtio_pci", "virtio_net")
"""Kernel modules the router loads (their dependencies come along): its NICs are virtio."""
INSTALL_HINT = (
    "make system-deps installs them (Debian: qemu-system-x86 qemu-utils linux-image-cloud-amd64"
    " e2fsprogs)"
)
BOOT_COMMAND_LINE = "console=ttyS0 quiet panic=-1"
TEMPLATE_COMMAND_LINE = f"{BOOT_COMMAND_LINE} hostname=router"
"""The routers' templates' kernel command line: its `hostname=` argument is what the GNS3
client sets to each node's name when the node is created or renamed."""

BOOT_STEPS = """\
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for module in $(cat /etc/modules); do insmod "/lib/modules/$module"; done
name=router
for word in $(cat /proc/cmdline); do
    case "$word" in
        hostname=*) name="${word#hostname=}" ;;
        mtu.*=*) port="${word%%=*}"; ip link set "${port#mtu.}" mtu "${word#*=}" ;;
    esac
done
hostname "$name"
"""
"""What every router's /init does first: the kernel's file systems, its modules, the host
name from the `hostname=` kernel argument (default `router`) and each interface's MTU
from an `mtu.<interface>=<bytes>` one (`mtu.eth1=1400`; 1500 without)."""

DISK_SIZE = "32M"
DISK_HASH_SEED = "4c4c4c4c-0000-4000-8000-000000000001"
SAVE_COMMAND = "save-config"
STARTUP_FILE = "/disk/startup.sh"
SAVE_SCRIPT = f"""#!/bin/sh
if ! grep -q ' /disk ' /proc/mounts; then
    echo "{SAVE_COMMAND}: this router has no disk to save to"; exit 1
fi
{{
    ip -o -4 addr show | awk '$2 != "lo" {{ print "ip addr add " $4 " dev " $2 }}'
    ip -4 route show | awk '!(/ scope link / && / src /) {{ print "ip route add " $0 }}'
    ip -o link show | awk -F': ' \\
        '$2 != "lo" && $3 !~ /[<,]UP[,>]/ {{ print "ip link set " $2 " down" }}'
    echo "sysctl -w net.ipv4.ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
}} > {STARTUP_FILE}.new && mv {STARTUP_FILE}.new {STARTUP_FILE}
sync && echo "Configuration saved."
"""
"""`save-config` on the Linux router: its addresses, its routes (not the connected ones:
BusyBox shows no `proto kernel`, so those with a source address on a link), the interfaces
shut down and whether it forwards, as the commands that set them again, written to its
disk (`STARTUP_FILE`), which /init runs at the next boot."""

INIT_SCRIPT = (
    """\
#!/bin/sh
export PATH=/bin
"""
    + BOOT_STEPS
    + f"""\
ip link set lo up
for device in /sys/class/net/eth*; do ip link set "${{device##*/}}" up; done
mkdir -p /disk
mount -t ext4 -o sync /dev/vda /disk 2>/dev/null
[ -f {STARTUP_FILE} ] && sh {STARTUP_FILE} >/dev/null 2>&1
export PS1="$name# "
while true; do setsid cttyhack sh; done
"""
)
"""The router's /init: interfaces up, then what `save-config` saved on the node's disk
(nothing at first: no addresses, forwarding off), a shell on the serial console (the
node's GNS3 console) started again when it exits."""


class RouterUnavailable(LabError):
    """The Linux router cannot be built on this machine; the message says what is missing."""


@dataclass(frozen=True)
class RouterImages:
    """The router's kernel, initramfs and (when it has one) blank disk: their GNS3 image
    names and contents."""

    kernel: str
    initrd: str
    files: dict[str, bytes]
    disk: str | None = None


def install_router(gns3: httpx.Client) -> RouterImages:
    """Build the router's images, upload them and add (or update) the GNS3 template
    `ROUTER_TEMPLATE` through `gns3` (an authenticated client of the lab's `/v3` API).
    Raises `RouterUnavailable` when QEMU or a suitable kernel is missing."""
    images = build_images()
    install_template(gns3, images.files, template_body(images))
    return images


def install_template(gns3: httpx.Client, files: dict[str, bytes], body: dict[str, object]) -> None:
    """Upload `files` to the lab's QEMU images, then add the template `body` (or update the
    template of the same name); `RouterUnavailable` when GNS3 refuses one of them."""
    for name, data in files.items():
        uploaded = gns3.post(f"/v3/images/upload/QEMU/{name}", content=data)
        _require(uploaded, f"the image {name}")
    listed = gns3.get("/v3/templates")
    _require(listed, "the templates")
    existing = [t for t in listed.json() if t.get("name") == body["name"]]
    if existing:
        answer = gns3.put(f"/v3/templates/{existing[0]['template_id']}", json=body)
    else:
        answer = gns3.post("/v3/templates", json=body)
    _require(answer, f"the {body['name']} template")


def _require(answer: httpx.Response, what: str) -> None:
    if answer.status_code >= 400:
        raise RouterUnavailable(
            f"GNS3 refused {what}: HTTP {answer.status_code} {answer.text[:300]}"
        )


def template_body(images: RouterImages) -> dict[str, object]:
    """The GNS3 template of the router (QEMU, 4 virtio ports, telnet console, a disk of
    its own for `save-config`)."""
    return {
        "name": ROUTER_TEMPLATE,
        "template_type": "qemu",
        "compute_id": "local",
        "category": "router",
        "symbol": ":/symbols/classic/router.svg",
        "default_name_format": "R{0}",
        "usage": "device_type:linux. A Linux router: a BusyBox shell on its console; "
        f"ports e0-e3 are eth0-eth3; {SAVE_COMMAND} keeps its addresses, routes and "
        "forwarding across a restart.",
        "qemu_path": QEMU,
        "platform": "x86_64",
        "ram": 128,
        "cpus": 1,
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


def hostname_command_line(name: str) -> str:
    """The kernel command line that makes a router node's prompt its name (`R1# `)."""
    return f"{BOOT_COMMAND_LINE} hostname={name}"


def build_images() -> RouterImages:
    """The kernel and the initramfs (module docstring)."""
    kernel, modules_dir = find_kernel()
    kernel_data = kernel.read_bytes()
    initrd_data = initramfs(find_busybox(), modules_dir)
    kernel_name = f"linux-router-vmlinuz-{digest(kernel_data)}"
    initrd_name = f"linux-router-initrd-{digest(initrd_data)}.gz"
    disk_name, disk_data = blank_disk()
    return RouterImages(
        kernel=kernel_name,
        initrd=initrd_name,
        disk=disk_name,
        files={kernel_name: kernel_data, initrd_name: initrd_data, disk_name: disk_data},
    )


def find_busybox() -> Path:
    """BusyBox on this machine; `RouterUnavailable` when it (or QEMU) is missing."""
    if shutil.which(QEMU) is None:
        raise RouterUnavailable(f"{QEMU} is not installed; {INSTALL_HINT}")
    busybox = shutil.which("busybox")
    if busybox is None:
        raise RouterUnavailable(f"busybox is not installed; {INSTALL_HINT}")
    return Path(busybox)


def digest(data: bytes) -> str:
    """A short content address of `data` (image names change when their content does)."""
    return hashlib.sha256(data).hexdigest()[:12]


def find_kernel(
    boot: Path = Path("/boot"), modules_root: Path = Path("/lib/modules")
) -> tuple[Path, Path]:
    """A readable kernel in `boot` whose modules include a virtio network driver (the
    newest such), and its modules folder."""
    found = []
    for kernel in boot.glob("vmlinuz-*"):
        version = kernel.name.removeprefix("vmlinuz-")
        modules_dir = modules_root / version
        if module_paths(modules_dir, MODULES) is not None and _readable(kernel):
            found.append((kernel.stat().st_mtime, kernel, modules_dir))
    if not found:
        raise RouterUnavailable(
            f"no Linux kernel with virtio network modules in {boot}; {INSTALL_HINT}"
        )
    _, kernel, modules_dir = max(found)
    return kernel, modules_dir


def initramfs(busybox: Path, modules_dir: Path) -> bytes:
    """The router's initramfs (gzip'd cpio "newc"): BusyBox with its applets and the
    libraries it links, the network and disk modules in load order, `save-config`,
    `/init`."""
    archive = busybox_archive(busybox, modules_dir, (*MODULES, "virtio_blk"))
    archive.directory("disk")
    archive.file(f"bin/{SAVE_COMMAND}", SAVE_SCRIPT.encode(), mode=0o755)
    archive.file("init", INIT_SCRIPT.encode(), mode=0o755)
    return gzip.compress(archive.finish(), compresslevel=6, mtime=0)


def busybox_archive(busybox: Path, modules_dir: Path, modules: Iterable[str]) -> CpioWriter:
    """An initramfs without its /init yet: the base folders, a console device, BusyBox
    with its applets and libraries, `modules` (and those they need) in load order in
    /lib/modules, listed in that order in /etc/modules."""
    archive = CpioWriter()
    for folder in ("bin", "dev", "etc", "lib", "lib/modules", "proc", "sys", "tmp"):
        archive.directory(folder)
    archive.device("dev/console", major=5, minor=1)
    archive.file("bin/busybox", busybox.read_bytes(), mode=0o755)
    for applet in _applets(busybox):
        if applet != "busybox":
            archive.symlink(f"bin/{applet}", "busybox")
    for library in libraries(busybox):
        archive.parents(library)
        archive.file(str(library).lstrip("/"), library.read_bytes(), mode=0o755)
    ordered = module_paths(modules_dir, modules)
    if ordered is None:
        raise RouterUnavailable(f"{modules_dir} lacks one of the modules {', '.join(modules)}")
    names = []
    for module in ordered:
        name = re.sub(r"\.ko(\.xz)?$", ".ko", module.name)
        data = module.read_bytes()
        archive.file(
            f"lib/modules/{name}", lzma.decompress(data) if module.suffix == ".xz" else data
        )
        names.append(name)
    archive.file("etc/modules", ("\n".join(names) + "\n").encode())
    return archive


def _readable(path: Path) -> bool:
    try:
        with path.open("rb"):
            return True
    except OSError:
        return False


def _applets(busybox: Path) -> list[str]:
    listed = subprocess.run(
        [str(busybox), "--list"], capture_output=True, text=True, timeout=10, check=True
    )
    return [name for name in listed.stdout.split() if "/" not in name]


def libraries(binary: Path, search: Iterable[Path] = ()) -> list[Path]:
    """The shared libraries (and the loader) `binary` needs, looked up in `search` folders
    before the system's; [] for a static one."""
    env = {"LD_LIBRARY_PATH": ":".join(str(folder) for folder in search)}
    listed = subprocess.run(
        ["ldd", str(binary)], capture_output=True, text=True, timeout=10, env=env
    )
    paths = re.findall(r"(/\S+) \(0x", listed.stdout) if listed.returncode == 0 else []
    return [Path(p) for p in paths]


def module_paths(modules_dir: Path, wanted: Iterable[str]) -> list[Path] | None:
    """The files of `wanted` modules and their dependencies, each after those it needs
    (read from `modules.dep`); None when one is missing."""
    try:
        lines = (modules_dir / "modules.dep").read_text().splitlines()
    except OSError:
        return None
    deps: dict[str, list[str]] = {}
    for line in lines:
        module, _, needs = line.partition(":")
        deps[module] = needs.split()
    by_name = {re.sub(r"\.ko(\.\w+)?$", "", Path(m).name).replace("-", "_"): m for m in deps}
    ordered: list[str] = []

    def add(module: str) -> None:
        for needed in deps.get(module, []):
            add(needed)
        if module not in ordered:
            ordered.append(module)

    for name in wanted:
        found = by_name.get(name)
        if found is None or found.endswith(".zst"):
            return None
        add(found)
    return [modules_dir / module for module in ordered]


class CpioWriter:
    """A cpio archive in the "newc" format the Linux kernel unpacks as its initramfs."""

    def __init__(self) -> None:
        self._out = io.BytesIO()
        self._inode = 0
        self._seen: set[str] = set()

    def directory(self, path: str) -> None:
        self._entry(path, 0o040755, b"")

    def parents(self, path: Path) -> None:
        """The directories above `path` (absolute), each once."""
        for parent in reversed(path.parents[:-1]):
            self.directory(str(parent).lstrip("/"))

    def file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(path, 0o100000 | mode, data)

    def symlink(self, path: str, target: str) -> None:
        self._entry(path, 0o120777, target.encode())

    def device(self, path: str, *, major: int, minor: int) -> None:
        self._entry(path, 0o020600, b"", rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0, b"", trailer=True)
        return self._out.getvalue()

    def _entry(
        self,
        path: str,
        mode: int,
        data: bytes,
        rdev: tuple[int, int] = (0, 0),
        trailer: bool = False,
    ) -> None:
        if not trailer:
            if path in self._seen:
                return
            self._seen.add(path)
        self._inode += 1
        name = path.encode() + b"\0"
        fields = (
            self._inode,
            mode,
            0,  # uid
            0,  # gid
            2 if mode & 0o040000 else 1,  # links
            0,  # mtime
            len(data),
            0,  # device major
            0,  # device minor
            rdev[0],
            rdev[1],
            len(name),
            0,  # checksum
        )
        self._out.write(b"070701" + b"".join(b"%08X" % value for value in fields))
        self._out.write(name)
        self._pad()
        self._out.write(data)
        self._pad()

    def _pad(self) -> None:
        self._out.write(b"\0" * (-self._out.tell() % 4))


def blank_disk() -> tuple[str, bytes]:
    """An empty ext4 file system of `DISK_SIZE` as a qcow2 image (each router node's disk
    is a linked clone of it), made with e2fsprogs without clock or random input, so the
    same on every build: its image name (its content's address: both routers share it, as
    GNS3 refuses a second name for the same image) and content."""
    with tempfile.TemporaryDirectory() as scratch:
        raw, image = Path(scratch) / "disk.raw", Path(scratch) / "disk.qcow2"
        raw.write_bytes(b"")
        format_disk = ["mke2fs", "-q", "-F", "-t", "ext4", "-U", "clear", "-L", "config"]
        format_disk += ["-E", f"hash_seed={DISK_HASH_SEED}", str(raw), DISK_SIZE]
        env = {"E2FSPROGS_FAKE_TIME": "1", "PATH": "/usr/sbin:/sbin:/usr/bin:/bin"}
        run_tool(format_disk, env=env)
        run_tool(["qemu-img", "convert", "-q", "-O", "qcow2", str(raw), str(image)])
        data = image.read_bytes()
        return f"router-disk-{digest(data)}.qcow2", data


def run_tool(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a build tool (`command`); its output. `RouterUnavailable` with its error when
    it is missing, fails or takes over 5 minutes."""
    try:
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RouterUnavailable(f"{command[0]} failed: {exc}; {INSTALL_HINT}") from exc
    if done.returncode != 0:
        raise RouterUnavailable(f"{' '.join(command[:3])} failed: {done.stderr.strip()[-300:]}")
    return done.stdout + done.stderr
