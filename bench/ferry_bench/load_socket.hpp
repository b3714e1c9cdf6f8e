// The load program's socket baseline: the limit a request/response
// service meets on this machine without an actor framework.
//
// The server (`--peer=socket-load`) is one thread on epoll: it accepts any
// number of connections, reads 64-byte requests (an 8-byte sequence number
// and 56 bytes) and answers each, in order, with its 8-byte sequence
// number, writing what it gathered from one read at once. The client
// (`--load-client=socket`) speaks the load clients' stdin protocol
// (load_client.cpp): one connection; at each step a thread writes the
// requests at their scheduled times (open loop) while the calling thread
// reads the answers and records each latency from its request's scheduled
// time, which it computes from the sequence number.
#pragma once

#include <cstdint>
#include <string>

namespace ferry::bench {

/// Bytes of a request and of its answer.
inline constexpr size_t socket_load_request_bytes = 64;
inline constexpr size_t socket_load_answer_bytes = 8;

/// The server's entry: listens on `address`, prints "port <n>", serves
/// until stdin closes.
int socket_load_server_main(const std::string& address);

/// The client's entry: connects to `host`:`port`, prints "ready", runs
/// steps until stdin closes.
int socket_load_client_main(const std::string& host, uint16_t port);

} // namespace ferry::bench
