"""TLS for a Python peer's links, with the standard `ssl` module.

Contract: `tls_context(cert, key, ca)` returns a client `ssl.SSLContext` as
ferry's nodes expect of a peer (docs/security.md): TLS 1.2 or 1.3, mutual
authentication (this side presents `cert`/`key`, the node's certificate must
chain to `ca`), no session tickets. The node's name is checked against its
certificate in the handshake (the intro's name must be one of the
certificate's names), not against the address dialed.
"""

from __future__ import annotations

import os
import ssl

StrPath = str | os.PathLike[str]


def tls_context(cert: StrPath, key: StrPath, ca: StrPath) -> ssl.SSLContext:
    """A client context for TLS links to ferry nodes (see above)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(ca)
    ctx.load_cert_chain(cert, key)
    ctx.options |= ssl.OP_NO_TICKET
    return ctx
