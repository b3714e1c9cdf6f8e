// hello_nodes: the smallest multi-process ferry program.
//
// The parent starts itself again as a child process ("--peer"); the child
// publishes an actor on a loopback port, the parent connects through CAF's
// middleman and measures round trips. Run: ./hello_nodes
#include "ferry/errc.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace {

using namespace std::chrono_literals;

int run_peer() {
  caf::actor_system_config cfg;
  cfg.load<caf::io::middleman>();
  caf::actor_system sys{cfg};
  auto echo = sys.spawn([]() -> caf::behavior {
    return {[](int x) { return x + 1; }};
  });
  auto port = sys.middleman().publish(echo, 0, "127.0.0.1");
  if (!port) {
    std::cerr << "peer: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::cout << *port << std::endl;
  std::string line;
  std::getline(std::cin, line); // The parent closes our stdin when done.
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string{argv[1]} == "--peer")
    return run_peer();
  // Start the peer with pipes for its stdin and stdout.
  int to_child[2];
  int from_child[2];
  if (pipe(to_child) != 0 || pipe(from_child) != 0)
    return 1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  posix_spawn_file_actions_addclose(&actions, to_child[1]);
  posix_spawn_file_actions_addclose(&actions, from_child[0]);
  char peer_flag[] = "--peer";
  char* child_argv[] = {argv[0], peer_flag, nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, child_argv, environ) != 0)
    return 1;
  posix_spawn_file_actions_destroy(&actions);
  close(to_child[0]);
  close(from_child[1]);
  FILE* child_out = fdopen(from_child[0], "r");
  unsigned port = 0;
  if (child_out == nullptr || fscanf(child_out, "%u", &port) != 1) {
    std::cerr << "hello_nodes: the peer did not report a port\n";
    return 1;
  }
  int rc = 0;
  {
    caf::actor_system_config cfg;
    cfg.load<caf::io::middleman>();
    caf::actor_system sys{cfg};
    auto peer = sys.middleman().remote_actor("127.0.0.1",
                                             static_cast<uint16_t>(port));
    if (!peer) {
      std::cerr << "hello_nodes: " << ferry::render(peer.error()) << '\n';
      rc = 1;
    } else {
      caf::scoped_actor self{sys};
      constexpr int rounds = 1000;
      int value = 0;
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < rounds && rc == 0; ++i)
        self->request(*peer, 10s, value)
          .receive([&](int x) { value = x; },
                   [&](caf::error& err) {
                     std::cerr << "hello_nodes: " << ferry::render(err) << '\n';
                     rc = 1;
                   });
      auto elapsed = std::chrono::steady_clock::now() - start;
      auto us = std::chrono::duration<double, std::micro>(elapsed).count();
      std::cout << "hello_nodes: " << rounds << " round trips to peer pid "
                << pid << " on port " << port << ", value " << value << ", "
                << us / rounds << " us per round trip\n";
      if (value != rounds)
        rc = 1;
    }
  }
  close(to_child[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  fclose(child_out);
  return rc;
}
