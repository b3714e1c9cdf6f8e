// Certificates for the TLS rows (see test_pki.hpp).
#include "test_pki.hpp"

#include <cstdlib>
#include <stdexcept>

namespace ferry::bench {

void make_certificates(const std::string& dir,
                       const std::vector<std::string>& names) {
  auto command = std::string{FERRY_PKI_SCRIPT} + " " + dir;
  for (auto& x : names)
    command += " " + x;
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("make_test_pki.sh failed (is openssl "
                             "installed?)");
}

tls_credentials credentials_of(const std::string& dir,
                               const std::string& name) {
  return {dir + "/" + name + ".pem", dir + "/" + name + ".key",
          dir + "/ca.pem"};
}

} // namespace ferry::bench
