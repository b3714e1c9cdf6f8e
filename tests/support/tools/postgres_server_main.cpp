// ferry_postgres_server: a throwaway PostgreSQL server for tests written in
// Python (ferry/test/postgres_server.hpp does the work). Prints
// "ready <conninfo>" once the server accepts connections, or "error <why>"
// and exits 1; stops the server and removes its directory when its standard
// input closes.
//
// Usage: ferry_postgres_server [DATABASE]
#include "ferry/test/postgres_server.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  ferry::test::postgres_server_options options;
  if (argc > 1)
    options.database = argv[1];
  auto started = ferry::test::postgres_server::start(options);
  if (!started.server) {
    std::cout << "error " << started.error << std::endl;
    return 1;
  }
  std::cout << "ready " << started.server->conninfo() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    // Anything written is ignored: the server lives until stdin closes.
  }
  return 0;
}
