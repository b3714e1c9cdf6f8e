// The sending and receiving actors, shared by the CAF baseline and ferry.
//
// Both sides run the same code whether the receiver is a plain CAF actor, a
// CAF remote proxy or a ferry proxy, so ferry and its baseline do exactly the
// same work:
//
// - The *sink* (receiver) reads the first and last byte of every payload.
//   A request is answered with the receiver's steady-clock time in ns (a
//   `uint64_t`); a one-way message is counted and every `ack_every`-th one
//   acknowledged to its sender with the count (a `uint64_t`).
// - The *driver* (sender) is a scoped actor. `oneway` keeps at most `window`
//   messages unacknowledged; `pingpong` sends requests one after another.
//   The payload is one prebuilt `caf::message` sent again and again (CAF
//   shares its content; nothing is copied on the sender's side before the
//   transport does its work).
#pragma once

#include "bench_types.hpp"
#include "runs.hpp"
#include "stream_trial.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>

#include <functional>
#include <memory>

namespace ferry::bench {

/// Resets the sink: `(reset_atom, ack_every) -> uint64_t`.
using reset_atom = caf::atom_constant<caf::atom("reset")>;

/// Returns the steady clock (CLOCK_MONOTONIC, the same in every process of
/// the host) in ns.
uint64_t now_ns();

/// Registers the baseline's message types with a plain CAF config (same
/// names in every raw-caf process) and loads CAF's middleman.
void register_caf_types(caf::actor_system_config& cfg);

/// Spawns a sink in `sys`.
caf::actor spawn_sink(caf::actor_system& sys);

/// Stops `sink` (if any) and spawns a new one in `sys` in its place.
void replace_sink(caf::actor_system& sys, caf::actor& sink);

/// Reads `caf-application.ini` from the working directory into `cfg` (no
/// flags), so that one file sets CAF options for every system of a run,
/// baseline and ferry alike. A missing or unreadable file changes nothing.
void read_caf_application_ini(caf::actor_system_config& cfg);

/// Resets the sink's count and sets its acknowledgement interval; returns
/// false if the sink did not answer.
bool reset_sink(caf::actor_system& sys, const caf::actor& sink,
                uint64_t ack_every);

/// Returns a message holding `size` bytes: `std::vector<char>` for plain CAF
/// (`chars`), else `std::vector<std::byte>`. Cached per size.
caf::message bytes_message(uint64_t size, bool chars);

/// Returns a message holding a `bench_record` of about `size` bytes.
caf::message record_message(uint64_t size);

/// Returns a trial of `pat` from a scoped actor in `sys` to `dest` (see
/// runs.hpp). `make_payload` makes the message for the warm-up and for each
/// round, which is dropped afterwards (a store object per round, not one per
/// trial for the whole set); it throws std::runtime_error when it cannot.
/// In-process rows pass `new_sink`: it puts a new sink in place of the last
/// and returns it, before the warm-up and every round (a CAF actor's rate
/// depends on the instance, see main.cpp).
std::unique_ptr<trial> make_trial(caf::actor_system& sys,
                                  const caf::actor& dest,
                                  std::function<caf::message()> make_payload,
                                  pattern pat, const run_params& p,
                                  trial_hooks hooks,
                                  std::function<caf::actor()> new_sink);

/// Sends `payload` as a request from `self` and returns the receiver's
/// timestamp (ns) minus the time of sending, in µs; negative on failure
/// (`error` says why). `self` is made before the clock starts: the time is
/// the message's alone, not a new actor's spawn and the receiver's first
/// sight of it.
double timed_request(caf::scoped_actor& self, const caf::actor& dest,
                     const caf::message& payload, double timeout_seconds,
                     std::string& error);

/// Serves a peer's commands on stdin until it closes, resetting `sink`
/// (see peer.cpp); `ferry` serves the ferry peers' own commands.
int serve_peer(caf::actor_system& sys, const caf::actor& sink,
               const ferry_peer_commands& ferry = {});

/// The peer process with plain CAF (caf_runs.cpp) or a ferry node
/// (ferry_runs.cpp); `argv` holds CAF's and ferry's flags only. Each
/// publishes its sink at `address`.
int caf_peer_main(int argc, char** argv, bool tuned,
                  const std::string& address);
int ferry_peer_main(int argc, char** argv, const std::string& address);

} // namespace ferry::bench
