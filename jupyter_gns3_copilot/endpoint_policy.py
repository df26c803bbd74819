"""Model endpoints a user may not choose on their own: link-local and cloud metadata addresses.

A model endpoint is a URL the server fetches with the user's (or the admin's) settings, so
a user who may choose any endpoint could make the server call its own cloud metadata
service (credentials of the machine) or other link-local services. `refused_endpoint`
says why a URL is one of those; the administrator may still allow any of them by listing
it in `allowed_base_urls` (`llm_config.LLMAdminConfig.check_base_url`).

What is checked, without resolving names (a check-then-resolve would not hold anyway:
the name may resolve differently when the model is called):
- literal addresses in every spelling the C library accepts (`169.254.169.254`,
  `2852039166`, `0xa9fea9fe`, `0251.0376.0251.0376`, `[::ffff:169.254.169.254]`,
  `[fe80::1%eth0]`): link-local (169.254.0.0/16, fe80::/10) and the metadata addresses
  of `METADATA_ADDRESSES`;
- the metadata host names of `METADATA_HOSTS` (with or without a trailing dot).

Core module: standard library only.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
    }
)
"""Names of cloud metadata services (Google Cloud, AWS, Tencent Cloud)."""

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, Azure, Google Cloud, Oracle, OpenStack, DigitalOcean
        "169.254.170.2",  # AWS ECS task credentials
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)

_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+")


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`host` as an IP address if it is one (any spelling `inet_aton` accepts), else None."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        if not _NUMERIC_HOST.fullmatch(host):
            return None
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refused_endpoint(url: str) -> str | None:
    """Why a user may not choose `url` on their own (link-local or metadata), or None."""
    host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    if not host:
        return None
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata service"
    address = _literal_address(host)
    if address is None:
        return None
    if address in METADATA_ADDRESSES:
        return f"{host} is a cloud metadata address ({address})"
    if address.is_link_local:
        return f"{host} is a link-local address ({address}; 169.254.0.0/16 and fe80::/10)"
    return None


__all__ = ["METADATA_ADDRESSES", "METADATA_HOSTS", "refused_endpoint"]
