"""TLS links between a Python peer (the standard ssl module) and a C++
node: a peer whose certificate carries its name links and calls; one that
calls itself by another name is refused by name; a plain peer is refused by
a TLS node; a certificate from another CA fails the TLS handshake.
"""

import os
import subprocess
import unittest

import ferry
from support import Service, ServiceTest, scratch


class TlsTest(ServiceTest):
    @classmethod
    def setUpClass(cls):
        cls.pki = scratch("python-tls")
        subprocess.run(["sh", os.environ["FERRY_MAKE_TEST_PKI"], cls.pki,
                        "cpp", "py", "mallory", "--ca", "other", "stranger"],
                       check=True)
        p = lambda name: os.path.join(cls.pki, name)  # noqa: E731
        cls.service = Service("--ferry.tls.certificate=" + p("cpp.pem"),
                              "--ferry.tls.key=" + p("cpp.key"),
                              "--ferry.tls.ca-file=" + p("ca.pem"))

    def context(self, name, ca="ca"):
        p = lambda f: os.path.join(self.pki, f)  # noqa: E731
        return ferry.tls_context(p(name + ".pem"), p(name + ".key"),
                                 p(ca + ".pem"))

    def test_a_peer_with_a_certificate_for_its_name_links_and_calls(self):
        with self.service.connect(name="py",
                                  ssl_context=self.context("py")) as node:
            self.assertEqual(node.peer_name, "cpp")
            self.assertEqual(node.lookup("echo").request(
                {"x": 1, "y": 2}, type="py.point"), {"x": 1, "y": 2})
            big = os.urandom(9 << 20)  # pulled in chunks, over TLS
            back = node.lookup("echo").request({"seq": 1, "bytes": big},
                                               type="py.blob", timeout=60)
            self.assertTrue(back["bytes"] == big)

    def test_a_peer_calling_itself_by_another_name_is_refused(self):
        with self.assertRaises(ferry.Error) as caught:
            self.service.connect(name="py", ssl_context=self.context(
                "mallory"))
        self.assertEqual(caught.exception.name, "handshake_failed")
        self.assertIn("name mismatch", caught.exception.text)

    def test_a_plain_peer_is_refused_by_a_tls_node(self):
        with self.assertRaises(ferry.Error) as caught:
            self.service.connect(name="py")
        self.assertEqual(caught.exception.name, "handshake_failed")
        self.assertIn("does not speak TLS", caught.exception.text)

    def test_a_certificate_of_another_ca_fails_the_tls_handshake(self):
        with self.assertRaises(ferry.Error) as caught:
            self.service.connect(name="stranger",
                                 ssl_context=self.context("stranger",
                                                          ca="other"))
        self.assertEqual(caught.exception.name, "handshake_failed")


if __name__ == "__main__":
    unittest.main()
