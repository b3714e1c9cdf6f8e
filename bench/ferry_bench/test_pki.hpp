// Certificates for the TLS rows: the test PKI of
// tests/support/scripts/make_test_pki.sh (the `openssl` command), one CA per
// run for every node of it.
//
// `make_certificates` writes DIR/ca.pem and, per name, DIR/NAME.pem and
// DIR/NAME.key (EC P-256, subject and DNS name NAME, usable as TLS server
// and client); a name made again gets a new certificate from the same CA.
// The ferry tls rows and the tls-socket limit row both use it. Runs on the
// driver's main thread only (the script writes files in DIR).
#pragma once

#include <string>
#include <vector>

namespace ferry::bench {

/// The files one TLS end reads: its certificate, its key and the CA.
struct tls_credentials {
  std::string certificate;
  std::string key;
  std::string ca_file;
};

/// Makes certificates for `names` in `dir` (one CA for all); throws
/// std::runtime_error when the script fails.
void make_certificates(const std::string& dir,
                       const std::vector<std::string>& names);

/// Returns the files of `name` in `dir`, as `make_certificates` wrote them.
tls_credentials credentials_of(const std::string& dir, const std::string& name);

} // namespace ferry::bench
