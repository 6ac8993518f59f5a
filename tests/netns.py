"""Linux network namespaces joined by veth pairs, made and removed by a test, and a private CA.

Only addresses in 10.0.0.0/8 on the veths this module creates are used; each namespace has its own
loopback, so nothing a test starts listens on the machine's own interfaces. Needs root (or
CAP_NET_ADMIN) and iproute2's `ip`; `netns_available()` says why not where they are missing.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=20)


def netns_available() -> str | None:
    """None when namespaces can be made here, else the reason (for the skip message)."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root (run the suite as root, or in a CI job that is)"
    name = f"vask-probe-{secrets.token_hex(3)}"
    made = _ip("netns", "add", name, check=False)
    if made.returncode != 0:
        return f"`ip netns add` is not permitted here: {made.stderr.strip()}"
    _ip("netns", "del", name, check=False)
    return None


@dataclass
class Link:
    """A veth pair between two namespaces, with one /30 address at each end."""

    a: str
    b: str
    a_address: str
    b_address: str


@dataclass
class Topology:
    """Namespaces by role, the links between them; `close()` removes all (the veths go with them)."""

    suffix: str = field(default_factory=lambda: secrets.token_hex(2))
    namespaces: dict[str, str] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)

    def add(self, role: str) -> str:
        name = f"vask-{role}-{self.suffix}"
        _ip("netns", "add", name)
        self.namespaces[role] = name
        _ip("-n", name, "link", "set", "lo", "up")
        return name

    def link(self, a: str, b: str, network: str) -> Link:
        """Joins roles a and b over `network` (a /30 in 10.0.0.0/8): a gets the first address, b the second."""
        net = ipaddress.ip_network(network)
        assert net.subnet_of(ipaddress.ip_network("10.0.0.0/8")) and net.prefixlen == 30, network
        first, second = (str(host) for host in net.hosts())
        n = len(self.links)
        dev_a, dev_b = f"vk{self.suffix}{n}a", f"vk{self.suffix}{n}b"  # (15 characters at most)
        _ip("link", "add", dev_a, "type", "veth", "peer", "name", dev_b)
        for dev, role, address in ((dev_a, a, first), (dev_b, b, second)):
            ns = self.namespaces[role]
            _ip("link", "set", dev, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{address}/30", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
        link = Link(a, b, first, second)
        self.links.append(link)
        return link

    def command(self, role: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.namespaces[role], *argv]

    def close(self) -> list[str]:
        """Removes every namespace made; returns those that could not be removed."""
        left = []
        for name in self.namespaces.values():
            if _ip("netns", "del", name, check=False).returncode != 0:
                left.append(name)
        self.namespaces.clear()
        return left


def random_networks(count: int) -> list[str]:
    """`count` distinct /30s in 10.200.0.0/13, so that two runs at once rarely meet (and never leave it)."""
    block = ipaddress.ip_network("10.200.0.0/13")
    base = int(block.network_address) + secrets.randbelow(block.num_addresses // (4 * count)) * 4 * count
    networks = [ipaddress.ip_network(f"{ipaddress.ip_address(base + 4 * n)}/30") for n in range(count)]
    assert all(net.subnet_of(block) for net in networks), networks
    return [str(net) for net in networks]


@dataclass
class Certificates:
    ca: Path
    server_cert: Path
    server_key: Path
    ollama_cert: Path
    ollama_key: Path


def make_certificates(folder: Path, server_names: Sequence[str], ollama_names: Sequence[str]) -> Certificates:
    """A CA, and one certificate it signs for the server and one for Ollama (names: IPs or DNS)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        path.chmod(0o600)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(name("vask test CA"))
        .issuer_name(name("vask test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )  # digital signature, cert sign, CRL sign
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = folder / "ca.pem"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    def leaf(stem: str, names: Sequence[str]) -> tuple[Path, Path]:
        key = ec.generate_private_key(ec.SECP256R1())
        alt: list[x509.GeneralName] = []
        for entry in names:
            try:
                alt.append(x509.IPAddress(ipaddress.ip_address(entry)))
            except ValueError:
                alt.append(x509.DNSName(entry))
        cert = (
            x509.CertificateBuilder()
            .subject_name(name(names[0]))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        cert_path, key_path = folder / f"{stem}.pem", folder / f"{stem}-key.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(key_path, key)
        return cert_path, key_path

    server_cert, server_key = leaf("server", server_names)
    ollama_cert, ollama_key = leaf("ollama", ollama_names)
    return Certificates(ca_path, server_cert, server_key, ollama_cert, ollama_key)
