// The puller: fetches large frames of cross-host messages in chunks.
//
// Between nodes that share no store, frames of at least `pull_threshold`
// bytes stay with the sender (transfer/transfer_table.hpp) and travel as
// `remote_object` descriptors. The receiving link queues such a message and
// every message after it (so order is kept) and wakes its puller, which
// fetches each large frame with at most `chunks_in_flight` requests of
// `chunk_size` bytes outstanding, writes the chunks into one buffer per frame,
// releases the sender's copy (`transfer_done`) and delivers the message.
//
// Pulled frames land in this process's memory, not in the host store: the
// message has exactly one consumer, and an owned buffer lets decoders adopt
// it (raw `std::vector<std::byte>` takes it without a copy). See
// docs/architecture.md. Store handles inside the message (`remote_handle`
// frames) are pulled the same way into new objects of this host's store:
// the payload's handles then resolve to those copies (store::import_scope).
// Either way each chunk request names where its bytes land (the link's
// pending asks, link/pending_asks.hpp), so the connection's reader takes
// them from the socket straight into their place.
//
// A store object that another node was sent before this one (the frame's
// relay hint, wire/relay_hint.hpp) is pulled from that node first: it
// answers from its copy as the chunks land there (transfer/relay_sources.hpp).
// A chunk it cannot give (it never had the object, gave up, or let it go)
// is asked of the owner; after `max_relay_misses` such chunks the rest of
// the object comes from the owner. Either way the object is this node's to
// relay in turn while it lands and while this host holds it after.
//
// The puller is an actor of its own: it keeps chunk requests outstanding
// without blocking a thread, and a message waiting for its chunks holds up
// only its own link's later messages.
#include "link/puller.hpp"

#include "link/atoms.hpp"
#include "link/link_state.hpp"
#include "transfer/landing_buffer.hpp"
#include "transfer/relay_source.hpp"
#include "wire/relay_hint.hpp"

#include "ferry/errc.hpp"
#include "ferry/store/object_builder.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <cstdint>
#include <deque>
#include <exception>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace ferry::detail {

namespace {

constexpr auto chunk_timeout = std::chrono::seconds{60};

struct frame_job {
  size_t element = 0;
  size_t frame = 0;
  uint64_t transfer = 0;
  uint64_t size = 0;
  uint64_t next_offset = 0;
  uint64_t received = 0;
  /// Where the frame lands (shared with the landings of its chunks): an
  /// owned buffer, or a new store object for a store handle.
  std::shared_ptr<landing_buffer> buffer;
  /// Relaying: the object's relay key, this node's source for it (null:
  /// another pull here serves it, or no key), the link to the node to pull
  /// from before the owner (empty: the owner only), the chunks that node
  /// could not give, and the ranges to ask the owner for instead.
  uint64_t relay_key = 0;
  std::shared_ptr<relay_source> source;
  std::weak_ptr<link_state> relay_link;
  size_t relay_misses = 0;
  std::deque<std::pair<uint64_t, uint64_t>> retry;
};

/// Chunks a relaying node may fail to give before the owner gives the rest.
constexpr size_t max_relay_misses = 8;

/// A chunk request waiting for its answer.
struct asked_chunk {
  size_t index = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t generation = 0;
  /// The link asked (the owner's, or a relaying node's) and the request's
  /// id there.
  std::weak_ptr<link_state> asked;
  uint64_t request = 0;
  /// Whether a relaying node was asked (not the owner).
  bool relayed = false;
};

struct puller_state {
  // Not an aggregate: CAF probes actor states for `inspect`, and ferry's
  // aggregate reflection must not try to take this one apart.
  puller_state() = default;
  puller_state(const puller_state&) = delete;
  puller_state& operator=(const puller_state&) = delete;

  ~puller_state() {
    forget_all();
    close_sources(
      caf::make_error(errc::link_down, "the link to the owner went down"));
  }

  /// Gives up relaying the objects of the current message that did not
  /// land (their pull failed or stopped).
  void close_sources(const caf::error& why) {
    if (!relays)
      return;
    for (auto& job : jobs)
      if (job.source)
        relays->close(job.relay_key, job.source, why);
  }

  /// Forgets every request waiting for an answer.
  void forget_all() {
    for (auto& [key, x] : asked)
      if (auto l = x.asked.lock())
        l->forget_ask(x.request);
    asked.clear();
  }

  std::weak_ptr<link_state> link;
  /// The objects this node relays.
  std::shared_ptr<relay_registry> relays;
  std::optional<std::pair<wire_message, uint64_t>> current;
  std::vector<frame_job> jobs;
  size_t outstanding = 0;
  /// Requests waiting for their answer, by the puller's own key.
  std::unordered_map<uint64_t, asked_chunk> asked;
  uint64_t next_key = 1;
  size_t done = 0;
  /// Bumped per message so late replies to an abandoned one are ignored.
  uint64_t generation = 0;
  static inline const char* name = "ferry.puller";
};

using puller_actor = caf::stateful_actor<puller_state>;

void advance(puller_actor* self);

void abandon(puller_actor* self, const std::shared_ptr<link_state>& link,
             caf::error reason);

void finish(puller_actor* self, const std::shared_ptr<link_state>& link) {
  auto& st = self->state;
  auto& msg = st.current->first;
  for (auto& job : st.jobs) {
    auto& frame = msg.elements[job.element].frames[job.frame];
    if (static_cast<frame_kind>(frame.kind) == frame_kind::remote_handle) {
      auto ref = job.buffer->seal();
      if (!ref) {
        abandon(self, link, std::move(ref.error()));
        return;
      }
      if (job.source && link->host().store() != nullptr)
        job.source->sealed(*ref, *link->host().store());
      msg.imports.emplace_back(frame.object_id, std::move(*ref));
      continue;
    }
    frame.kind = static_cast<uint8_t>(frame_kind::inline_plain);
    frame.data = wire_bytes{job.buffer->take()};
  }
  link->deliver(msg, st.current->second, self->context());
  st.current.reset();
  st.jobs.clear();
}

void abandon(puller_actor* self, const std::shared_ptr<link_state>& link,
             caf::error reason) {
  auto& st = self->state;
  ++st.generation;
  st.forget_all();
  st.close_sources(reason);
  // refuse() releases every remote frame of the message at the sender.
  link->refuse_taken(st.current->first, st.current->second, std::move(reason),
                     self->context());
  st.current.reset();
  st.jobs.clear();
  st.outstanding = 0;
}

void request_more(puller_actor* self, const std::shared_ptr<link_state>& link);

/// Asks the owner for the chunk a relaying node did not give, counting the
/// miss against the relay.
void ask_owner_instead(puller_actor* self,
                       const std::shared_ptr<link_state>& link, frame_job& job,
                       uint64_t offset, uint64_t length) {
  job.retry.emplace_back(offset, length);
  ++job.relay_misses;
  request_more(self, link);
}

/// Takes the answer to the chunk request `x`, from the owner or from a
/// relaying node; may finish or abandon the current message.
void on_chunk(puller_actor* self, const asked_chunk& x,
              pending_asks::answer& reply) {
  auto& st = self->state;
  auto link = st.link.lock();
  if (!link || x.generation != st.generation || !st.current)
    return;
  --st.outstanding;
  auto& job = st.jobs[x.index];
  auto via = x.relayed ? x.asked.lock() : nullptr;
  auto from = via ? via->peer_name() : link->peer_name();
  std::string wrong;
  if (reply.error)
    wrong = "node " + from +
            " answered a chunk request with an error: " + render(reply.error);
  else if (!reply.landed && reply.data.size() != x.length)
    wrong = "node " + from + " sent a chunk of " +
            std::to_string(reply.data.size()) + " bytes for a request of " +
            std::to_string(x.length);
  else if (!reply.landed && !job.buffer->land(x.offset, reply.data.bytes()))
    wrong = "a chunk at offset " + std::to_string(x.offset) + " from node " +
            from + " does not fit its frame of " + std::to_string(job.size) +
            " bytes";
  if (!wrong.empty()) {
    if (!x.relayed) {
      abandon(self, link,
              caf::make_error(errc::transfer_failed,
                              "pulling a large frame from node " +
                                link->peer_name() + " failed: " + wrong));
      return;
    }
    // A relaying node's bad answer costs that chunk a request to the owner.
    if (!reply.error)
      link->host().log("relayed chunk refused: " + wrong);
    ask_owner_instead(self, link, job, x.offset, x.length);
    return;
  }
  job.received += x.length;
  if (via)
    via->count_pulled_relayed(x.length);
  else
    link->count_pulled(x.length);
  if (job.source)
    job.source->landed(x.offset, x.length);
  if (job.received == job.size) {
    link->send_control(transfer_done{job.transfer});
    if (++st.done == st.jobs.size()) {
      finish(self, link);
      return;
    }
  }
  request_more(self, link);
}

/// Returns the next range of job `job` to ask for, and whether it may come
/// from the relaying node; nothing when every range is asked for.
std::optional<std::pair<uint64_t, uint64_t>>
next_range(frame_job& job, uint64_t chunk_size, bool& may_relay) {
  if (!job.retry.empty()) {
    auto range = job.retry.front();
    job.retry.pop_front();
    may_relay = false;
    return range;
  }
  if (job.next_offset >= job.size)
    return std::nullopt;
  auto offset = job.next_offset;
  auto length = std::min<uint64_t>(chunk_size, job.size - offset);
  job.next_offset += length;
  job.buffer->prepare(offset + length);
  may_relay = job.relay_misses < max_relay_misses;
  return std::pair{offset, length};
}

void request_more(puller_actor* self, const std::shared_ptr<link_state>& link) {
  auto& st = self->state;
  auto& cfg = link->config();
  for (size_t index = 0; index < st.jobs.size(); ++index) {
    auto& job = st.jobs[index];
    while (st.outstanding < cfg.chunks_in_flight) {
      bool may_relay = false;
      auto range = next_range(job, cfg.chunk_size, may_relay);
      if (!range)
        break;
      asked_chunk x;
      x.index = index;
      x.offset = range->first;
      x.length = range->second;
      x.generation = st.generation;
      auto via = may_relay ? job.relay_link.lock() : nullptr;
      x.relayed = via && !via->is_down();
      auto& asked = x.relayed ? via : link;
      auto key = st.next_key++;
      ++st.outstanding;
      // The answer comes on the thread that reads it; the puller takes it
      // as a message. The puller is held weakly: a node shutting down waits
      // for no answer.
      auto me = caf::actor_cast<caf::weak_actor_ptr>(self->ctrl());
      auto id = asked->ask_chunk(
        job.transfer, x.relayed ? job.relay_key : 0, x.offset, x.length,
        job.buffer, [me, key](pending_asks::answer a) {
          if (auto p = caf::actor_cast<caf::actor>(me))
            caf::anon_send(p, chunk_atom::value, key, std::move(a));
        });
      x.asked = asked;
      x.request = id;
      st.asked.emplace(key, std::move(x));
      // A link that is down failed the ask at once: its answer is queued.
      if (id != 0)
        self->delayed_send(self, chunk_timeout, chunk_timeout_atom::value, key);
    }
  }
}

/// Takes the answer (or failure) of the request `key`.
void answered(puller_actor* self, uint64_t key, pending_asks::answer& a) {
  auto& st = self->state;
  auto i = st.asked.find(key);
  if (i == st.asked.end())
    return; // timed out before
  auto x = std::move(i->second);
  st.asked.erase(i);
  on_chunk(self, x, a);
}

/// The request `key` got no answer in time: it fails.
void expired(puller_actor* self, uint64_t key) {
  auto& st = self->state;
  auto i = st.asked.find(key);
  if (i == st.asked.end())
    return;
  if (auto l = i->second.asked.lock())
    l->forget_ask(i->second.request);
  pending_asks::answer a;
  a.error = caf::make_error(errc::transfer_failed,
                            "no answer to a chunk request within " +
                              std::to_string(chunk_timeout.count()) + " s");
  answered(self, key, a);
}

/// Makes the store object of `job` this node's to relay under the key of
/// `hint`, and pulls it from the node `hint` names where this node has a
/// link to it.
void relay(puller_actor* self, link_state& link, frame_job& job,
           const relay_hint& hint) {
  auto& st = self->state;
  job.relay_key = hint.key;
  job.source = st.relays->open(hint.key, job.buffer->object_bytes(), job.buffer,
                               link.peer_name(), 4 * link.config().chunk_size);
  if (hint.from.empty() || hint.from == link.peer_name() ||
      hint.from == link.host().node_name())
    return;
  if (auto via = link.host().link_to(hint.from); via && !via->is_down())
    job.relay_link = via;
}

void start(puller_actor* self, const std::shared_ptr<link_state>& link) {
  auto& st = self->state;
  auto& msg = st.current->first;
  st.jobs.clear();
  st.done = 0;
  st.outstanding = 0;
  ++st.generation;
  uint64_t total = 0;
  for (size_t e = 0; e < msg.elements.size(); ++e)
    for (size_t f = 0; f < msg.elements[e].frames.size(); ++f) {
      auto& frame = msg.elements[e].frames[f];
      if (!is_pulled(static_cast<frame_kind>(frame.kind)))
        continue;
      // Saturates: a peer's sizes may add up beyond 2^64.
      total = frame.size > UINT64_MAX - total ? UINT64_MAX : total + frame.size;
      frame_job job;
      job.element = e;
      job.frame = f;
      job.transfer = frame.ticket;
      job.size = frame.size;
      st.jobs.emplace_back(std::move(job));
    }
  if (total > link->config().max_message_size) {
    abandon(self, link,
            caf::make_error(errc::message_too_large,
                            "node " + link->peer_name() + " offers " +
                              (total == UINT64_MAX ? std::string{"2^64 or more"}
                                                   : std::to_string(total)) +
                              " bytes of large frames, above the link's "
                              "max-message-size of " +
                              std::to_string(link->config().max_message_size) +
                              "; raise max-message-size on the receiver"));
    return;
  }
  for (auto& job : st.jobs) {
    auto& frame = msg.elements[job.element].frames[job.frame];
    if (static_cast<frame_kind>(frame.kind) != frame_kind::remote_handle)
      continue;
    auto object = link->create_import(frame.object_id, job.size);
    if (!object) {
      abandon(self, link, std::move(object.error()));
      return;
    }
    job.buffer = std::make_shared<landing_buffer>(std::move(*object));
    if (auto hint = decode_relay_hint(frame.data.bytes()))
      relay(self, *link, job, *hint);
  }
  try {
    for (auto& job : st.jobs)
      if (!job.buffer)
        job.buffer = std::make_shared<landing_buffer>(job.size);
  } catch (const std::exception& e) {
    // std::bad_alloc, or std::length_error for a size no vector can hold.
    abandon(self, link,
            caf::make_error(errc::transfer_failed,
                            "cannot allocate " + std::to_string(total) +
                              " bytes for frames from node " +
                              link->peer_name() + " (" + e.what() +
                              "); lower max-message-size to what this "
                              "host can hold"));
    return;
  }
  for (auto& job : st.jobs)
    if (job.size == 0)
      ++st.done;
  if (st.done == st.jobs.size()) {
    finish(self, link);
    return;
  }
  request_more(self, link);
}

// Takes queued messages until one waits for chunks. A message that ends at
// once (nothing to pull, refused) leaves `current` empty and the loop takes
// the next: finish and abandon never call back into advance, so a peer
// queueing thousands of such messages costs no stack.
void advance(puller_actor* self) {
  auto& st = self->state;
  while (!st.current) {
    auto link = st.link.lock();
    if (!link)
      return;
    auto next = link->take_queued();
    if (!next)
      return;
    st.current = std::move(next);
    if (!has_pulled_frames(st.current->first)) {
      link->deliver(st.current->first, st.current->second, self->context());
      st.current.reset();
      continue;
    }
    // Nothing a peer sends may end the puller: the link's later messages
    // wait for it.
    try {
      start(self, link);
    } catch (const std::exception& e) {
      if (st.current)
        abandon(self, link,
                caf::make_error(errc::transfer_failed,
                                "cannot start pulling the large frames of a "
                                "message from node " +
                                  link->peer_name() + ": " + e.what()));
    }
  }
}

caf::behavior puller(puller_actor* self, std::weak_ptr<link_state> link,
                     std::shared_ptr<relay_registry> relays) {
  self->state.link = std::move(link);
  self->state.relays = std::move(relays);
  return {
    [self](pull_atom) { advance(self); },
    [self](chunk_atom, uint64_t key, pending_asks::answer& a) {
      answered(self, key, a);
      advance(self);
    },
    [self](chunk_timeout_atom, uint64_t key) {
      expired(self, key);
      advance(self);
    },
  };
}

} // namespace

caf::actor spawn_puller(caf::actor_system& sys, std::weak_ptr<link_state> link,
                        std::shared_ptr<relay_registry> relays) {
  return sys.spawn(puller, std::move(link), std::move(relays));
}

} // namespace ferry::detail
