// The peer process: ferry-bench started again with
// `--peer=caf|caf-tuned|ferry|socket|tls-socket|socket-load`.
//
// It publishes a sink (see driver.hpp; the socket and tls-socket peers
// listen on a plain socket instead, see limit_runs.cpp) on a loopback port,
// prints "port <N>", then serves commands on stdin, one per line, until
// stdin closes. Two options of its own come first, before CAF's and ferry's:
// `--netns=<path>` joins that network namespace before anything starts, and
// `--address=<a>` listens at <a> (default 127.0.0.1); the `netns` rows use
// both (emulated_hosts.hpp). Commands:
//   reset <k>   reset the sink (acknowledge every k one-way messages) and
//               this process's peak RSS; answers "ok"
//   rss         answers "rss <MiB>": peak resident memory since the last
//               reset, without the host store's shared pages
//   connect <host> <port>
//               ferry peers: links this node to the ferry node listening at
//               <host>:<port>; answers "ok" or "error <reason>"
//   relayed     ferry peers: answers "relayed <bytes>", the bytes of store
//               objects this node pulled from other receivers' copies
//               instead of their owner (summed over its links)
// Every other argument is CAF's and ferry's (--ferry.store.name=...), or
// the tls-socket peer's certificate, key and CA.
#include "driver.hpp"
#include "emulated_hosts.hpp"
#include "load_socket.hpp"
#include "machine.hpp"

#include <caf/all.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace ferry::bench {

int serve_commands(const std::function<bool(uint64_t)>& reset_receiver,
                   const ferry_peer_commands& ferry) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.rfind("reset ", 0) == 0) {
      auto k = std::stoull(line.substr(6));
      bool ok = reset_receiver(k);
      reset_peak_rss();
      std::cout << (ok ? "ok" : "error sink did not answer") << std::endl;
    } else if (line == "rss") {
      std::cout << "rss " << peak_private_rss_mb() << std::endl;
    } else if (line.rfind("connect ", 0) == 0) {
      std::istringstream words{line.substr(8)};
      std::string host;
      unsigned long port = 0;
      std::string why;
      if (!ferry.connect)
        why = "not a ferry peer";
      else if (!(words >> host >> port) || port == 0 || port > 65535)
        why = "expected connect <host> <port>, got " + line;
      else
        why = ferry.connect(host, static_cast<uint16_t>(port));
      std::cout << (why.empty() ? "ok" : "error " + why) << std::endl;
    } else if (line == "relayed") {
      if (ferry.relayed)
        std::cout << "relayed " << ferry.relayed() << std::endl;
      else
        std::cout << "error not a ferry peer" << std::endl;
    } else {
      std::cout << "error unknown command " << line << std::endl;
    }
  }
  return 0;
}

int serve_peer(caf::actor_system& sys, const caf::actor& sink,
               const ferry_peer_commands& ferry) {
  return serve_commands(
    [&](uint64_t k) { return reset_sink(sys, sink, k); }, ferry);
}

int peer_main(int argc, char** argv) {
  std::string mode = argv[1] + std::strlen("--peer=");
  std::string address = "127.0.0.1";
  int i = 2;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--netns=", 0) == 0) {
      if (auto why = enter_network_namespace(arg.substr(8)); !why.empty()) {
        std::cerr << "ferry-bench peer: " << why << '\n';
        return 2;
      }
    } else if (arg.rfind("--address=", 0) == 0) {
      address = arg.substr(10);
    } else {
      break;
    }
  }
  std::vector<char*> rest{argv[0]};
  for (; i < argc; ++i)
    rest.push_back(argv[i]);
  rest.push_back(nullptr);
  auto n = static_cast<int>(rest.size()) - 1;
  if (mode == "caf" || mode == "caf-tuned")
    return caf_peer_main(n, rest.data(), mode == "caf-tuned", address);
  if (mode == "socket")
    return socket_peer_main(address);
  if (mode == "socket-load")
    return socket_load_server_main(address);
  if (mode == "tls-socket")
    return tls_socket_peer_main(n, rest.data(), address);
  if (mode == "ferry")
    return ferry_peer_main(n, rest.data(), address);
  std::cerr << "ferry-bench: unknown peer mode " << mode << '\n';
  return 2;
}

} // namespace ferry::bench
