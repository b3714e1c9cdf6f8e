// Nodes with TLS links for the TLS tests (tls_*_test.cpp): the test PKI,
// made at first use by make_test_pki.sh (the `openssl` command) in a
// directory of the process's own and removed when the tests end; a node in
// this process that keeps its log lines (`tls_node`); an echo actor; and
// `expect_refused`, which checks a refusal from both sides and that the
// refusing node then still takes a good peer.
//
// The PKI: CA "ca" signs alpha, beta, gamma, expired, future and locked
// (key encrypted with "secret"); CA "other" signs mallory; both.pem trusts
// both CAs.
#pragma once

#include "ferry/node.hpp"

#include <caf/behavior.hpp>
#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ferry::test::tls {

/// Returns the path of `name` in the test PKI (made at the first call).
std::string file(const std::string& name);

/// Answers a string with its reverse and bytes with their FNV-1a hash.
caf::behavior echo();

/// One node in this process, with its log lines.
struct tls_node {
  ferry::node_config cfg;
  std::unique_ptr<ferry::node> node;
  std::mutex mtx;
  std::vector<std::string> lines;

  /// Sets up a node named `name` with the certificate `cert` (none: a plain
  /// node) and the CA file `ca`.
  tls_node(const std::string& name, const std::string& cert,
           const std::string& ca = "ca.pem");

  ~tls_node();

  /// Starts the node; returns its error (none on success).
  caf::error start();

  /// Publishes an echo actor; returns the port.
  uint16_t serve();

  /// Returns the log lines that contain `text`, waiting up to 10 s for the
  /// first.
  std::vector<std::string> logged(const std::string& text);

  /// Returns the log lines of TLS refusals that contain `text`, waiting up
  /// to 10 s for the first.
  std::vector<std::string> refused(const std::string& text);

  /// Returns the count of log lines of TLS refusals.
  size_t refusals();

private:
  std::vector<std::string> logged_with(const std::string& prefix,
                                       const std::string& text);
};

/// Asks `whom` from `from` to echo `text`; its answer, or the error.
caf::expected<std::string>
ask_text(ferry::node& from, const caf::actor& whom, const std::string& text);

/// Renders `err` as ferry does.
std::string text_of(const caf::error& err);

/// What the client learns when the server refused its certificate but the
/// server's alert was lost: the server closes the connection with the
/// client's first bytes unread, and the reset that makes can overtake the
/// alert (TLS 1.3: the client has finished its handshake by then).
extern const std::string lost_alert;

/// Expects `client` to fail connecting to `server` with `handshake_failed`
/// naming `client_reason` (or, with `alert_may_be_lost`, saying that the
/// server's alert was lost), and `server` to log one line naming
/// `server_reason`; then checks that `server` still takes a good peer.
void expect_refused(tls_node& server, tls_node& client,
                    const std::string& client_reason,
                    const std::string& server_reason,
                    bool server_is_valid = true,
                    bool alert_may_be_lost = false);

} // namespace ferry::test::tls
