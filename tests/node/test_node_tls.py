"""The center over https and a node that checks its certificate, as a household sets it up:
a CA of its own (made here with `cryptography`), a certificate for the center signed by
it, and `JARVIS_CENTER_CA` on the node. Real uvicorn on loopback, real TLS."""

from __future__ import annotations

import ipaddress
import os
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from jarvis.center.llm.scripted import ScriptedBackend, text
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings, SettingsError, load_settings
from jarvis.node import (
    CenterCertificateError,
    JarvisCommandCenterClient,
    NodeSettings,
    open_node,
)
from jarvis.protocol import NodeContext

TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {}}}


@dataclass(frozen=True)
class Pki:
    ca: Path
    other_ca: Path
    cert: Path
    key: Path
    # Signed by the home CA for another host name only.
    elsewhere_cert: Path
    elsewhere_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _server_cert(ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate,
                 names: list[x509.GeneralName]
                 ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder().subject_name(_name("jarvis-center")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.OID_SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca_key, ca = _ca("Home CA")
    _other_key, other = _ca("Someone else's CA")
    loopback = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    key, cert = _server_cert(ca_key, ca, loopback)
    elsewhere_key, elsewhere = _server_cert(ca_key, ca, [x509.DNSName("jarvis.home")])
    paths = Pki(*(folder / name for name in ("ca.pem", "other-ca.pem", "center.pem",
                                               "center.key", "elsewhere.pem", "elsewhere.key")))
    paths.ca.write_bytes(_pem(ca))
    paths.other_ca.write_bytes(_pem(other))
    paths.cert.write_bytes(_pem(cert))
    paths.key.write_bytes(_key_pem(key))
    paths.elsewhere_cert.write_bytes(_pem(elsewhere))
    paths.elsewhere_key.write_bytes(_key_pem(elsewhere_key))
    return paths


@pytest.fixture
def https_center(pki: Pki, tmp_path: Path) -> Iterator[CenterServer]:
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning",
                              ssl_certfile=pki.cert, ssl_keyfile=pki.key)
    with CenterServer(settings, ScriptedBackend([text("Fine.")], loop=True)) as server:
        yield server


def _converse(client: JarvisCommandCenterClient) -> str:
    cid = f"conv-{uuid.uuid4().hex[:12]}"
    client.start_conversation(cid, NodeContext(node_id="kitchen-pi"), [TOOL])
    return client.send_command("hello", cid).assistant_message or ""


def test_a_node_with_the_home_ca_talks_to_the_center_over_https(
        https_center: CenterServer, pki: Pki) -> None:
    assert https_center.url.startswith("https://127.0.0.1:")
    with JarvisCommandCenterClient(https_center.url, ca_file=pki.ca,
                                   key=https_center.add_node("node", replace=True)) as client:
        assert _converse(client) == "Fine."
    # The same certificate names the center as localhost too.
    url = https_center.url.replace("127.0.0.1", "localhost")
    with JarvisCommandCenterClient(url, ca_file=pki.ca,
                                   key=https_center.add_node("node", replace=True)) as client:
        assert _converse(client) == "Fine."


@pytest.mark.parametrize("trust", ["default", "other_ca"])
def test_a_node_without_the_ca_refuses_the_center_clearly(
        https_center: CenterServer, pki: Pki, trust: str) -> None:
    ca_file = pki.other_ca if trust == "other_ca" else None
    started = time.monotonic()
    client = JarvisCommandCenterClient(https_center.url, ca_file=ca_file, backoff=1.0)
    with client, pytest.raises(CenterCertificateError) as refused:
        client.start_conversation("conv-untrusted", NodeContext(), [TOOL])
    message = str(refused.value)
    assert f"the center at {https_center.url} has a certificate this node does not trust" in message
    assert "(unable to get local issuer certificate)" in message
    assert "set JARVIS_CENTER_CA" in message
    assert time.monotonic() - started < 1.0  # refused at once, not retried as a lost network
    assert https_center.app.state.store.load("conv-untrusted") is None  # type: ignore[union-attr]


def test_a_certificate_for_another_host_name_is_refused(pki: Pki, tmp_path: Path) -> None:
    settings = CenterSettings(data_dir=tmp_path, log_level="warning",
                              ssl_certfile=pki.elsewhere_cert, ssl_keyfile=pki.elsewhere_key)
    with CenterServer(settings, ScriptedBackend([text("Fine.")], loop=True)) as server:
        client = JarvisCommandCenterClient(server.url, ca_file=pki.ca,
                                           key=server.add_node("node"))
        with client, pytest.raises(CenterCertificateError) as refused:
            client.start_conversation("conv-elsewhere", NodeContext(), [TOOL])
    message = str(refused.value)
    assert "(IP address mismatch, certificate is not valid for '127.0.0.1')" in message
    assert message.endswith("use a center URL with a name the certificate was made for")


def test_the_node_settings_take_the_ca_from_the_environment(
        https_center: CenterServer, pki: Pki, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JARVIS_CENTER_URL", https_center.url)
    monkeypatch.setenv("JARVIS_CENTER_KEY", https_center.add_node("node", replace=True))
    monkeypatch.setenv("JARVIS_CENTER_CA", str(pki.ca))
    settings = NodeSettings.from_env()
    assert settings.center_ca == pki.ca
    node = open_node(settings, commands=[])
    try:
        assert node.client is not None
        assert _converse(node.client) == "Fine."
    finally:
        node.close()
    monkeypatch.setenv("JARVIS_CENTER_CA", str(pki.ca.with_name("missing.pem")))
    with pytest.raises(ValueError, match=r"JARVIS_CENTER_CA=.*is not a file"):
        NodeSettings.from_env()


def test_the_center_refuses_half_or_mismatched_tls_settings(pki: Pki, tmp_path: Path) -> None:
    env = {"JARVIS_DATA_DIR": str(tmp_path)}
    with pytest.raises(SettingsError, match="ssl_certfile and ssl_keyfile go together"):
        load_settings({"ssl_certfile": pki.cert}, env)
    with pytest.raises(SettingsError, match="cannot serve TLS with"):
        load_settings({"ssl_certfile": pki.ca, "ssl_keyfile": pki.key}, env)
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings({"ssl_certfile": tmp_path / "no.pem", "ssl_keyfile": pki.key}, env)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_jarvis_serve_with_a_certificate_serves_https(pki: Pki, tmp_path: Path) -> None:
    port = _free_port()
    script = tmp_path / "script.json"
    script.write_text('["Fine."]')
    env = {**os.environ, "JARVIS_LLM_BACKEND": "scripted", "JARVIS_LLM_SCRIPT": str(script),
           "JARVIS_DATA_DIR": str(tmp_path)}
    for name in ("JARVIS_DATABASE_URL", "JARVIS_CONFIG"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "jarvis.cli.main", "serve", "--port", str(port),
         "--log-level", "warning", "--ssl-certfile", str(pki.cert), "--ssl-keyfile", str(pki.key)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"https://127.0.0.1:{port}"
    home_ca = ssl.create_default_context(cafile=str(pki.ca))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/health", verify=home_ca).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, process.stdout.read().decode()  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "jarvis serve did not come up"
            time.sleep(0.2)
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"{url}/health")
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(f"http://127.0.0.1:{port}/health")  # plain http is not spoken
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0].decode()
    assert f"Jarvis center on https://127.0.0.1:{port}" in output
