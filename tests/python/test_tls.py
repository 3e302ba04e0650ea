"""`toolsmith serve --http … --tls-cert … --tls-key …` to the official Python SDK over HTTPS.

The test makes its own self-signed certificate for 127.0.0.1 (with `cryptography`), and the
client trusts exactly that certificate: a client that does not is refused by its own TLS check.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import httpx2 as httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp.client.streamable_http import streamable_http_client

from mcp_harness import TOOLSMITH_BIN, Servers, connect, text_of

pytestmark = pytest.mark.anyio


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key (PEM files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolsmith test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_calls_tools_over_https_trusting_the_servers_certificate(servers: Servers, tmp_path: Path, mode: str):
    cert, key = self_signed(tmp_path)
    argv = [str(TOOLSMITH_BIN), *servers.toolsmith_args("--http", "127.0.0.1:0", "--tls-cert", str(cert), "--tls-key", str(key))]
    url = servers.start_http(argv).url
    assert url.startswith("https://127.0.0.1:"), url

    trusted = ssl.create_default_context(cafile=str(cert))
    async with httpx.AsyncClient(verify=trusted) as http:
        async with connect(streamable_http_client(url, http_client=http), mode) as client:
            calc = await client.call_tool("calculate", {"expression": "6 * 7"})
    assert not calc.is_error and "42" in text_of(calc), text_of(calc)

    # A client that does not trust the certificate never gets to speak MCP.
    async with httpx.AsyncClient() as http:
        with pytest.raises(httpx.ConnectError):
            await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
