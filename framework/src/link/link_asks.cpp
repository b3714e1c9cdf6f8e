// link_state's own requests to the peer: lookups, spawns and chunks, each
// matched with its answer by pending_asks (see link/link_state.hpp and
// docs/wire-format.md, "Requests and answers").
#include "link/link_state.hpp"

#include "ferry/errc.hpp"

#include <caf/make_message.hpp>

namespace ferry::detail {

uint64_t link_state::ask_lookup(const std::string& name,
                                pending_asks::callback done) {
  auto id = asks_.add(pending_asks::kind::actor, std::move(done));
  if (id != 0)
    send_control(lookup{id, name});
  return id;
}

caf::expected<uint64_t> link_state::ask_spawn(const std::string& type_name,
                                              const caf::message& args,
                                              pending_asks::callback done) {
  // The arguments' store tickets and held frames go back when the spawn
  // fails in any way (refused, the link down, its asker gone): the peer
  // never took them then.
  struct unsent {
    std::vector<store::transfer_ticket> tickets;
    std::vector<uint64_t> transfers;
  };
  auto held = std::make_shared<unsent>();
  spawn_request req;
  req.type_name = type_name;
  inline_one<std::string> families;
  if (auto err =
        encode_message(0, nullptr, caf::make_message_id(), args, held->tickets,
                       held->transfers, families, req.args)) {
    release_unsent(held->tickets, held->transfers);
    return err;
  }
  req.request =
    asks_.add(pending_asks::kind::actor,
              [weak = weak_from_this(), held,
               done = std::move(done)](pending_asks::answer x) {
                if (x.error)
                  if (auto self = weak.lock())
                    self->release_unsent(held->tickets, held->transfers);
                done(std::move(x));
              });
  if (req.request != 0)
    send_frame(spawn_frame(req));
  return req.request;
}

uint64_t link_state::ask_chunk(uint64_t transfer, uint64_t relay_key,
                               uint64_t offset, uint64_t length,
                               std::shared_ptr<landing_buffer> target,
                               pending_asks::callback done) {
  auto id = asks_.add(std::move(done), std::move(target), offset, length);
  if (id == 0)
    return 0;
  if (relay_key != 0)
    send_control(relay_request{id, relay_key, offset, length});
  else
    send_control(chunk_request{id, transfer, offset, length});
  return id;
}

void link_state::give_up_ask(uint64_t id, caf::error why) {
  pending_asks::answer x;
  x.error = std::move(why);
  asks_.complete(id, std::move(x), pending_asks::kind::actor, true);
}

void link_state::count_unasked() {
  log_limited(log_topic::unasked,
              "dropped an answer from node " + peer_name_ +
                " to a request this node is not waiting for (answered "
                "after its timeout, or never asked)");
  ++counters_.unasked_answers;
}

} // namespace ferry::detail
