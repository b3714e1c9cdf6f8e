// tls_nodes: two ferry nodes on a TLS link with mutual authentication, and
// two nodes that are refused.
//
// The sample makes a test CA and certificates with make_test_pki.sh (the
// `openssl` command) in a temporary directory, starts itself again as the
// peer "vault" with --ferry.tls.* flags, and connects as "teller": both
// certificates are signed by the CA each trusts, and each names its node, so
// the link is made and requests travel encrypted. Then a node with a
// certificate from another CA, and a node called "teller" that holds
// vault's certificate, try the same and are refused, each with its reason.
// Run: ./tls_nodes
#include "peer_process.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

namespace {

using namespace std::chrono_literals;

namespace fs = std::filesystem;

caf::behavior vault(caf::event_based_actor*) {
  return {
    [](const std::string& account) { return account + ": 42 coins"; },
  };
}

int run_peer(ferry::node_config& cfg) {
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "tls_nodes peer: " << ferry::render(n.error()) << '\n';
    return 1;
  }
  auto actor = (*n)->system().spawn(vault);
  auto port = (*n)->publish(actor);
  if (!port) {
    std::cerr << "tls_nodes peer: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  sample::serve_until_parent_exits(*port);
  caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  return 0;
}

/// Sets the node's TLS options: certificate `cert`, signed by `ca`.
void use_tls(ferry::node_config& cfg, const fs::path& pki,
             const std::string& cert, const std::string& ca) {
  cfg.tls_certificate = (pki / (cert + ".pem")).string();
  cfg.tls_key = (pki / (cert + ".key")).string();
  cfg.tls_ca_file = (pki / (ca + ".pem")).string();
}

/// Connects as `name` with certificate `cert` of CA `ca`; returns the
/// answer or the error.
std::string ask_vault(const fs::path& pki, uint16_t port,
                      const std::string& name, const std::string& cert,
                      const std::string& ca) {
  ferry::node_config cfg;
  cfg.node_name = name;
  cfg.store_enabled = false;
  use_tls(cfg, pki, cert, ca);
  cfg.log_sink = [](const std::string&) {}; // the sample prints the errors
  auto n = ferry::node::start(cfg);
  if (!n)
    return "cannot start: " + ferry::render(n.error());
  auto remote = (*n)->remote_actor("127.0.0.1", port);
  if (!remote)
    return "refused: " + ferry::render(remote.error());
  std::string answer;
  caf::scoped_actor self{(*n)->system()};
  self->request(*remote, 10s, std::string{"teller"})
    .receive([&](const std::string& x) { answer = "answer: " + x; },
             [&](const caf::error& err) { answer = ferry::render(err); });
  return answer;
}

} // namespace

int main(int argc, char** argv) {
  ferry::node_config cfg;
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "tls_nodes: " << ferry::render(err) << '\n';
    return 2;
  }
  if (cfg.node_name == "vault")
    return run_peer(cfg);
  auto pki = fs::temp_directory_path()
             / ("ferry-tls-sample-" + std::to_string(getpid()));
  // both.pem: the stranger trusts the vault's CA, the vault does not trust
  // the stranger's.
  auto command = std::string{FERRY_PKI_SCRIPT} + " " + pki.string()
                 + " vault teller --ca other stranger && cat "
                 + (pki / "ca.pem").string() + " "
                 + (pki / "other.pem").string() + " > "
                 + (pki / "both.pem").string();
  if (std::system(command.c_str()) != 0) {
    std::cerr << "tls_nodes: make_test_pki.sh failed (is openssl "
                 "installed?)\n";
    return 1;
  }
  int rc = 0;
  {
    auto peer_flags = sample::peer_args({argv + 1, argv + argc}, "vault");
    peer_flags.push_back("--ferry.store.disabled");
    peer_flags.push_back("--ferry.tls.certificate=" + (pki / "vault.pem").string());
    peer_flags.push_back("--ferry.tls.key=" + (pki / "vault.key").string());
    peer_flags.push_back("--ferry.tls.ca-file=" + (pki / "ca.pem").string());
    sample::peer_process peer{peer_flags};
    auto good = ask_vault(pki, peer.port(), "teller", "teller", "ca");
    std::cout << "tls_nodes: teller, certificate from the vault's CA: "
              << good << '\n';
    auto stranger = ask_vault(pki, peer.port(), "stranger", "stranger",
                              "both");
    std::cout << "tls_nodes: stranger, certificate from another CA: "
              << stranger << '\n';
    auto impostor = ask_vault(pki, peer.port(), "teller", "vault", "ca");
    std::cout << "tls_nodes: a node called teller holding the vault's "
                 "certificate: "
              << impostor << '\n';
    if (good.rfind("answer: ", 0) != 0
        || stranger.rfind("refused: ", 0) != 0
        || impostor.find("name mismatch") == std::string::npos)
      rc = 1;
  }
  fs::remove_all(pki);
  return rc;
}
