"""One TLS context per process and CA source (`tls.py`): built once, shared by the
copilot's HTTP clients and by every model's openai client, honouring SSL_CERT_FILE as
the libraries themselves do."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import certifi
import pytest
from pydantic import SecretStr

from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
from jupyter_gns3_copilot.tls import model_tls_context, shared_tls_context


@pytest.fixture
def no_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


def ca_file(tmp_path: Path) -> Path:
    """A CA bundle at a path no other test uses (contexts are kept per path)."""
    path = tmp_path / "class-ca.pem"
    shutil.copyfile(certifi.where(), path)
    return path


def pool_context(client: object) -> ssl.SSLContext:
    """The TLS context an httpx-style client's connection pool connects with."""
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


@pytest.mark.usefixtures("no_ca_variables")
def test_clients_with_and_without_trust_env_share_the_default_context() -> None:
    assert shared_tls_context(trust_env=True) is shared_tls_context(trust_env=False)
    assert shared_tls_context() is shared_tls_context()


@pytest.mark.usefixtures("no_ca_variables")
def test_ssl_cert_file_gives_trust_env_clients_a_context_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = shared_tls_context(trust_env=False)
    bundle = ca_file(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    honoured = shared_tls_context(trust_env=True)
    assert honoured is not default
    assert honoured.get_ca_certs() == ssl.create_default_context(cafile=bundle).get_ca_certs()
    assert shared_tls_context(trust_env=False) is default


@pytest.mark.usefixtures("no_ca_variables")
def test_every_model_connects_with_the_one_model_context() -> None:
    """The openai client of each model (and the sync one langchain-openai builds anyway)
    takes the process's context instead of loading the CA store again."""
    models = [
        make_chat_model(ModelSettings(model=name, base_url=url, api_key=SecretStr("sk-test")))
        for name, url in (("gpt-4o", "http://127.0.0.1:9/v1"), ("gpt-4o-mini", "https://x.test/v1"))
    ]
    contexts = {id(pool_context(model.http_async_client)) for model in models}
    contexts |= {id(pool_context(model.http_client)) for model in models}
    assert contexts == {id(model_tls_context())}


@pytest.mark.usefixtures("no_ca_variables")
def test_the_model_context_honours_ssl_cert_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = model_tls_context()
    bundle = ca_file(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    honoured = model_tls_context()
    assert honoured is not default
    assert honoured.get_ca_certs() == ssl.create_default_context(cafile=bundle).get_ca_certs()
    model = make_chat_model(
        ModelSettings(model="gpt-4o", base_url="https://x.test/v1", api_key=SecretStr("sk-test"))
    )
    assert pool_context(model.http_async_client) is honoured
