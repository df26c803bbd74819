"""One TLS context per process and CA source for the HTTP clients the copilot makes: on the
server's event loop (GNS3, the hub service, a console's probe) and for each model
(openai's client).

httpx builds a new context for every client it makes, loading the CA bundle: ~40 ms on
an idle machine, a few hundred on a loaded one, and ~1 MB each. The warm-up thread builds
the contexts once (`server.warmup.prime_core`, and `prime` for the models' through its
throw-away model); clients made later take them ready. Sharing one context between
clients is safe: they only read it.
"""

from __future__ import annotations

import importlib
import os
import ssl

import httpx

_contexts: dict[tuple[str, ...], ssl.SSLContext] = {}


def _ca_source(trust_env: bool) -> tuple[str, ...]:
    """Where a library's default context takes its CAs from: SSL_CERT_FILE, else
    SSL_CERT_DIR when `trust_env`, else the library's own default."""
    if trust_env and (cafile := os.environ.get("SSL_CERT_FILE")):
        return ("file", cafile)
    if trust_env and (capath := os.environ.get("SSL_CERT_DIR")):
        return ("dir", capath)
    return ("default",)


def shared_tls_context(trust_env: bool = True) -> ssl.SSLContext:
    """httpx's default TLS context for a client with this `trust_env` (whether
    SSL_CERT_FILE and SSL_CERT_DIR are honoured), built once per process and CA source:
    with neither variable set, clients with and without `trust_env` share one."""
    key = ("httpx", *_ca_source(trust_env))
    context = _contexts.get(key)
    if context is None:
        context = _contexts[key] = httpx.create_ssl_context(trust_env=trust_env)
    return context


def model_tls_context() -> ssl.SSLContext:
    """The default TLS context of the HTTP library openai's client is built on (httpx2
    for recent openai releases, which trusts the system's CA store; httpx before, which
    trusts certifi's), with SSL_CERT_FILE and SSL_CERT_DIR honoured as that library does;
    built once per process and CA source, for every model's client."""
    import openai

    client_class = openai.DefaultAsyncHttpxClient.__mro__[1]
    library = importlib.import_module(client_class.__module__.partition(".")[0])
    key = (library.__name__, *_ca_source(True))
    context = _contexts.get(key)
    if context is None:
        context = _contexts[key] = library.create_ssl_context(trust_env=True)
    return context
