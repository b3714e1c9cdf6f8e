"""`python3 -m ferry.ping host:port`: checks a ferry node from the shell.

Links to the node as a Python peer (handshake, family negotiation), asks it
for an actor by name when `--lookup NAME` is given, ends the link in order
and prints one line of what it found; exits 0 when the node answered, 1
with the node's refusal or the failure, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from . import connect, tls_context
from .errors import Error


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the check with the command line `argv` (default: sys.argv);
    returns the exit status."""
    p = argparse.ArgumentParser(prog="python3 -m ferry.ping",
                                description="Checks a ferry node.")
    p.add_argument("address", help="host:port of the node")
    p.add_argument("--name", default=None, help="this peer's node name")
    p.add_argument("--families", default="msgpack,cereal.json",
                   help="families to offer, comma-separated")
    p.add_argument("--lookup", default=None,
                   help="also look up the actor the node exposes by NAME")
    p.add_argument("--tls", nargs=3, metavar=("CERT", "KEY", "CA"),
                   help="link over TLS with this certificate, key and CA")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds for the handshake (default 10)")
    args = p.parse_args(argv)
    try:
        start = time.monotonic()
        node = connect(args.address, name=args.name,
                       families=args.families.split(","),
                       timeout=args.timeout,
                       ssl_context=tls_context(*args.tls) if args.tls
                       else None)
        linked = (time.monotonic() - start) * 1e3
        found = ""
        if args.lookup is not None:
            actor = node.lookup(args.lookup, timeout=args.timeout)
            found = f"; actor {args.lookup!r} is {actor.id}"
        tls = " over TLS" if args.tls else ""
        default = (node.default_actor.id if node.default_actor
                   else "none")
        print(f"node {node.peer_name} at {args.address}: linked in "
              f"{linked:.1f} ms{tls}; sends {node.send_families}, receives "
              f"{node.recv_families}; {len(node.shapes)} message types; "
              f"default actor {default}{found}")
        node.close()
        return 0
    except Error as e:
        print(f"ferry.ping: {e.render()}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"ferry.ping: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
