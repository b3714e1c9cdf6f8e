"""ferry for Python: a peer that links to ferry nodes over ferry's own wire.

    import ferry
    node = ferry.connect("127.0.0.1:4242", name="py",
                         families=["msgpack", "cereal.json"])
    echo = node.lookup("echo")
    print(echo.request({"x": 1, "y": 2}, type="py.point"))

The protocol is docs/wire-format.md; docs/python.md describes this package.
"""

from .actors import LocalActor, RemoteActor, typed
from .delivery import Envelope
from .errors import Error, atom, atom_text
from .node import Node, connect
from .tls import tls_context
from .values import F32, MapPairs, same

__all__ = ["connect", "Node", "RemoteActor", "LocalActor", "Envelope",
           "Error", "F32", "MapPairs", "typed", "tls_context", "same",
           "atom", "atom_text"]
