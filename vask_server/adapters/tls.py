"""HTTPS for `vask serve`: the certificate and key checked before anything starts, with what to do."""

from __future__ import annotations

import ssl

from vask_server.errors import ConfigError
from vask_server.settings import Settings

RECIPES = "README 'One server, several devices' has recipes (a local CA with openssl or mkcert, Tailscale serve)."


def server_ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """None without TLS settings; else a context that speaks TLS 1.2+ only (so plain HTTP gets no answer)."""
    cert, key = settings.tls_cert, settings.tls_key
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        given, missing = ("--tls-cert", "--tls-key") if cert is not None else ("--tls-key", "--tls-cert")
        raise ConfigError(
            f"{given} was given without {missing}.", f"Pass both (VASK_TLS_CERT, VASK_TLS_KEY). {RECIPES}"
        )
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        if not path.expanduser().is_file():
            raise ConfigError(f"{flag} {path}: no such file.", f"Give the path of a PEM file. {RECIPES}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(cert.expanduser()), str(key.expanduser()))
    except ssl.SSLError as exc:
        raise ConfigError(
            f"Cannot use {cert} with {key}: {exc.reason or exc}.",
            "Both must be PEM; the key must be the certificate's, unencrypted (no passphrase). " + RECIPES,
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {cert} or {key}: {exc.strerror}.", "Let this user read both files.") from None
    return context
