// ferry_postgres_server: a throwaway PostgreSQL server for tests that start
// processes (ferry/test/postgres_server.hpp does the work). Prints
// "ready <conninfo>" once the server accepts connections, or "error <why>"
// and exits 1. Then it answers each line of its standard input:
//   stop    stops the server (its connections end): "stopped"
//   start   starts it again, with the same conninfo: "started"
// (or "error <why>"), and stops the server and removes its directory when
// its standard input closes.
//
// Usage: ferry_postgres_server [--listen=ADDRESS] [DATABASE]
// With --listen the server takes TCP connections at ADDRESS as well, and
// the conninfo printed is the TCP one (for processes in other network
// namespaces); otherwise it is the Unix socket's.
#include "ferry/test/postgres_server.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  ferry::test::postgres_server_options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--listen=", 0) == 0)
      options.listen_address = arg.substr(9);
    else if (!arg.empty() && arg[0] != '-')
      options.database = arg;
    else {
      std::cout << "error unknown flag " << arg
                << " (usage: ferry_postgres_server [--listen=ADDRESS] "
                   "[DATABASE])"
                << std::endl;
      return 2;
    }
  }
  auto started = ferry::test::postgres_server::start(options);
  if (!started.server) {
    std::cout << "error " << started.error << std::endl;
    return 1;
  }
  auto& server = *started.server;
  std::cout << "ready "
            << (options.listen_address.empty() ? server.conninfo()
                                               : server.tcp_conninfo())
            << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "stop") {
      auto why = server.stop();
      std::cout << (why.empty() ? "stopped" : "error " + why) << std::endl;
    } else if (line == "start") {
      auto why = server.restart();
      std::cout << (why.empty() ? "started" : "error " + why) << std::endl;
    } else {
      std::cout << "error unknown command " << line << std::endl;
    }
  }
  return 0;
}
