// The actors of a chaos node: see chaos_actors.hpp.
#include "chaos_actors.hpp"

#include "ferry/errc.hpp"
#include "ferry/node_events.hpp"

#include <caf/all.hpp>

namespace ferry::chaos {

using namespace std::chrono_literals;

// -- peer_table ---------------------------------------------------------------

peer_table::peer_table(const std::vector<std::string>& names) {
  for (auto& name : names)
    slots_[name];
}

void peer_table::up(const std::string& name, caf::actor proxy,
                    std::string epoch) {
  std::lock_guard<std::mutex> guard{mtx_};
  slots_[name].link = link_view{name, std::move(proxy), std::move(epoch)};
}

void peer_table::down(const std::string& name) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& s = slots_[name];
    s.link.reset();
    ++s.downs;
  }
  cv_.notify_all();
}

std::optional<link_view> peer_table::live(const std::string& name) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = slots_.find(name);
  return i == slots_.end() ? std::nullopt : i->second.link;
}

std::optional<link_view> peer_table::other(const std::string& name,
                                           uint64_t pick) {
  std::lock_guard<std::mutex> guard{mtx_};
  std::vector<const link_view*> found;
  for (auto& [peer, s] : slots_)
    if (peer != name && s.link)
      found.push_back(&*s.link);
  if (found.empty())
    return std::nullopt;
  return *found[pick % found.size()];
}

uint64_t peer_table::downs(const std::string& name) {
  std::lock_guard<std::mutex> guard{mtx_};
  return slots_[name].downs;
}

size_t peer_table::live_count() {
  std::lock_guard<std::mutex> guard{mtx_};
  size_t n = 0;
  for (auto& kv : slots_)
    n += kv.second.link ? 1 : 0;
  return n;
}

void peer_table::wait_down(const std::string& name,
                           std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{mtx_};
  cv_.wait_for(guard, timeout, [&] { return !slots_[name].link; });
}

// -- actors -------------------------------------------------------------------

std::string one_line(const caf::error& x) {
  auto text = ferry::render(x);
  for (auto& c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  return text;
}

caf::behavior keeper(caf::stateful_actor<keeper_state>* self) {
  return {
    [self](caf::actor& whom) { self->state.watchers.push_back(std::move(whom)); },
  };
}

caf::behavior object_worker(caf::event_based_actor*) {
  return {
    [](const u64_array& xs) { return object_checksum({xs.data(), xs.size()}); },
  };
}

caf::behavior front(caf::event_based_actor* self, node_context ctx,
                    caf::actor worker) {
  // Peers' linked watchers link to this actor, and a link works both ways:
  // when a watcher's node dies, its exit message comes here. The front
  // lives on (it traps exits); only an exit sent from no actor (the node
  // shutting down) ends it.
  self->set_exit_handler([self](caf::exit_msg& x) {
    if (!x.source)
      self->quit(x.reason);
  });
  return {
    [](const node_up&) {},
    [ctx](const node_down& x) {
      if (ctx.closing->load())
        return;
      ctx.log->write("down " + x.node + " " + one_line(x.reason));
      ctx.peers->down(x.node);
    },
    [self, ctx](const chaos_hello& hello, const caf::actor& their_front) {
      if (ctx.closing->load())
        return std::string{"closing"};
      ctx.log->write("link " + hello.name + " " + hello.epoch);
      spawn_watchers(self->system(), ctx, their_front, hello.epoch);
      ctx.peers->up(hello.name, their_front, hello.epoch);
      return std::string{"welcome"};
    },
    [ctx](const chaos_call& call) {
      ctx.log->write("serve " + call.from + " " + std::to_string(call.id));
      return checksum(call.body);
    },
    [ctx](const chaos_note& note) {
      auto ok = checksum(note.body) == note.sum;
      ctx.log->write("got " + note.from + " " + note.epoch + " "
                     + std::to_string(note.seq) + (ok ? " ok" : " bad"));
    },
    [self](const caf::actor& target,
           const chaos_call& call) -> caf::result<uint64_t> {
      auto answer = self->make_response_promise<uint64_t>();
      self->request(target, 8s, call)
        .then([answer](uint64_t x) mutable { answer.deliver(x); },
              [answer](caf::error& err) mutable {
                answer.deliver(std::move(err));
              });
      return answer;
    },
    [self, worker](u64_array& xs) {
      return self->delegate(worker, std::move(xs));
    },
  };
}

namespace {

caf::behavior monitoring(caf::event_based_actor* self, caf::actor whom,
                         node_context ctx, std::string epoch) {
  self->set_down_handler([self, ctx, epoch](caf::down_msg& x) {
    if (!ctx.closing->load())
      ctx.log->write("mon " + epoch + " down " + one_line(x.reason));
    self->quit();
  });
  self->monitor(whom);
  self->link_to(ctx.keeper);
  return {[](int32_t x) { return x; }};
}

caf::behavior linked(caf::event_based_actor* self, caf::actor whom,
                     node_context ctx, std::string epoch) {
  self->set_exit_handler([self, ctx, epoch](caf::exit_msg& x) {
    if (x.source == ctx.keeper.address()) {
      self->quit(x.reason);
      return;
    }
    if (!ctx.closing->load())
      ctx.log->write("mon " + epoch + " exit " + one_line(x.reason));
    self->quit(caf::exit_reason::normal);
  });
  self->link_to(whom);
  self->link_to(ctx.keeper);
  return {[](int32_t x) { return x; }};
}

} // namespace

void spawn_watchers(caf::actor_system& sys, const node_context& ctx,
                    const caf::actor& whom, const std::string& epoch) {
  caf::anon_send(ctx.keeper, sys.spawn(monitoring, whom, ctx, epoch));
  caf::anon_send(ctx.keeper, sys.spawn(linked, whom, ctx, epoch));
}

} // namespace ferry::chaos
