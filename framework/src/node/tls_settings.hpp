// tls_settings: a TLS node's own credentials, checked with OpenSSL when the
// node starts, and CAF's OpenSSL module set up to use them.
//
// CAF's OpenSSL module reads the certificate, key and CA files anew for
// every connection and throws from its own threads when one of them is
// wrong (a connect then hangs, an accepting process aborts), and it falls
// back to anonymous TLS when none is set. So ferry checks everything before
// the actor system exists: all of certificate, key and CA file are set (or
// no TLS option at all), each file is readable PEM, the key decrypts with
// the passphrase (a callback that never prompts), the key belongs to the
// certificate, and the CA file holds certificates. Each failure is an
// `invalid_config` naming the option, the file and what is wrong. What
// merely makes peers refuse this node (its certificate does not name the
// node, is expired or not yet valid, or does not chain to its own CA file)
// becomes a warning for the node's log.
//
// `prepare` then loads CAF's OpenSSL module into the config (once per
// config), sets CAF's `openssl.*` options from ferry's and turns automatic
// connections off (they would open plain BASP connections), and installs
// the process's TLS records (node/tls_identity.hpp).
//
// Thread-safety: `prepare` runs once per node start; the object is
// immutable afterwards and may be read from any thread.
#pragma once

#include <caf/expected.hpp>

#include <openssl/ossl_typ.h>

#include <memory>
#include <string>
#include <vector>

namespace ferry {
class node_config;
} // namespace ferry

namespace ferry::detail {

class tls_settings {
public:
  ~tls_settings();

  tls_settings(const tls_settings&) = delete;
  tls_settings& operator=(const tls_settings&) = delete;

  /// Checks the `ferry.tls` options of `cfg` and sets CAF up to use them;
  /// returns null when none is set (a plain node).
  static caf::expected<std::shared_ptr<const tls_settings>>
  prepare(node_config& cfg);

  /// What the check at start found wrong with the node's own certificate
  /// that makes peers refuse it (one line each).
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// Returns what is wrong with this node's certificate now ("expired",
  /// "not yet valid ..."), or an empty string.
  std::string own_problem() const;

private:
  tls_settings() = default;

  struct x509_deleter {
    void operator()(X509* cert) const;
  };

  std::unique_ptr<X509, x509_deleter> cert_;
  std::vector<std::string> warnings_;
};

} // namespace ferry::detail
