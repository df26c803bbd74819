"""One TLS context per process for the HTTP clients the copilot makes on the server's
event loop (GNS3, the hub service, a console's probe).

httpx builds a new context for every client it makes, loading the CA bundle: ~40 ms on
an idle machine, a few hundred on a loaded one, and the loop (every user and kernel of
the server) waits meanwhile. The warm-up thread builds the contexts once
(`server.warmup.prime_core`); clients made later take them ready. Sharing one context
between clients is safe: they only read it.
"""

from __future__ import annotations

import ssl

import httpx

_contexts: dict[bool, ssl.SSLContext] = {}


def shared_tls_context(trust_env: bool = True) -> ssl.SSLContext:
    """httpx's default TLS context for a client with this `trust_env` (whether
    SSL_CERT_FILE and SSL_CERT_DIR are honoured), built once per process."""
    context = _contexts.get(trust_env)
    if context is None:
        context = _contexts[trust_env] = httpx.create_ssl_context(trust_env=trust_env)
    return context
