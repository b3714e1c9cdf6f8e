// entity_base: what every activation of an entity does (see
// ferry/entity.hpp): it loads its state before its first message (the
// messages that come meanwhile wait in its mailbox), saves one state at a
// time in the order asked, stops when its host says (saving what changed
// first), and, when its state cannot be loaded or a save finds a newer
// activation's, answers what its mailbox holds with that error and ends.
#include "ferry/entity.hpp"

#include "entities/lease_fence.hpp"
#include "entities/protocol.hpp"

#include "ferry/serializers/errc.hpp"

#include <caf/message_handler.hpp>
#include <caf/message_view.hpp>
#include <caf/send.hpp>

#include <utility>

namespace ferry::detail {

using namespace entities;

namespace {

/// Returns `first`, and `second` for what `first` does not take.
caf::behavior either(const caf::behavior& first, const caf::behavior& second) {
  caf::message_handler a{first.as_behavior_impl()};
  caf::message_handler b{second.as_behavior_impl()};
  return a.or_else(b);
}

} // namespace

struct entity_base::save_state {
  /// A save is under way.
  bool running = false;
  /// A save was asked for since the last one started.
  bool again = false;
  /// The state was loaded (or there is none).
  bool loaded = false;
  /// The activation is ending: it takes no more work.
  bool ending = false;
  /// Who waits for the next save.
  std::vector<std::function<void(const caf::error&)>> waiting;
  /// What the last save stored, or what was loaded.
  std::vector<std::byte> last_saved;
};

entity_base::entity_base(caf::actor_config& cfg, entity_setup setup)
  : caf::event_based_actor(cfg),
    setup_(std::move(setup)),
    saves_(std::make_unique<save_state>()) {
  // nop
}

entity_base::~entity_base() = default;

caf::behavior entity_base::make_behavior() {
  if (!stateful()) {
    saves_->loaded = true;
    return either(entity_behavior(), system_behavior());
  }
  // Everything waits in the mailbox until the state is there.
  set_default_handler(caf::skip);
  request(setup_.store, caf::infinite, load_atom::value, setup_.type,
          setup_.key)
    .then(
      [this](std::string& family, std::vector<std::byte>& bytes,
             uint64_t version) {
        if (saves_->ending)
          return; // the fence closed while loading: fail() answers all
        if (auto err = read_state(family, bytes, version)) {
          fail(caf::make_error(
            errc::state_store_failed,
            "the stored state of entity (\"" + setup_.type + "\", \"" +
              setup_.key + "\"), version " + std::to_string(version) +
              " written by " + family +
              ", does not decode here: " + render(err) +
              "; the state type changed in a way its family cannot read, "
              "or another program wrote the row"));
          return;
        }
        version_ = version;
        saves_->last_saved = std::move(bytes);
        saves_->loaded = true;
        set_default_handler(caf::print_and_drop);
        become(either(entity_behavior(), system_behavior()));
      },
      [this](caf::error& err) { fail(std::move(err)); });
  // Matches nothing: what comes is skipped until the state is loaded.
  return {[](load_atom) {
  }};
}

caf::invoke_message_result entity_base::consume(caf::mailbox_element& x) {
  if (!saves_->ending && !x.mid.is_response() && setup_.fence &&
      setup_.fence->passed())
    fail(caf::make_error(
      errc::entity_unavailable,
      "entity (\"" + setup_.type + "\", \"" + setup_.key +
        "\") stops: its member's lease on the shard may have run out (the "
        "process was paused, or the database did not answer the renewal "
        "in time); send again: the shard's next holder answers"));
  return event_based_actor::consume(x);
}

caf::behavior entity_base::system_behavior() {
  return {
    [this](stop_atom) {
      // The host stops this activation (idle, or its shard moves): what
      // changed is saved first.
      if (saves_->ending)
        return;
      saves_->ending = true;
      if (!stateful()) {
        quit();
        return;
      }
      auto now = store_state();
      if (now && *now == saves_->last_saved && !saves_->running &&
          !saves_->again) {
        quit();
        return;
      }
      queue_save([this](const caf::error& err) {
        if (!err)
          quit();
        else if (err != errc::state_conflict)
          quit(err);
      });
    },
  };
}

void entity_base::save(std::function<void(const caf::error&)> done) {
  if (!stateful() || saves_->ending) {
    if (done)
      done(saves_->ending
             ? caf::make_error(errc::entity_unavailable,
                               "entity (\"" + setup_.type + "\", \"" +
                                 setup_.key + "\") is stopping")
             : caf::error{});
    return;
  }
  queue_save(std::move(done));
}

void entity_base::queue_save(std::function<void(const caf::error&)> done) {
  if (done)
    saves_->waiting.push_back(std::move(done));
  saves_->again = true;
  start_save();
}

void entity_base::start_save() {
  auto& s = *saves_;
  if (s.running || !s.again)
    return;
  s.again = false;
  auto callbacks = std::exchange(s.waiting, {});
  auto bytes = store_state();
  if (!bytes) {
    for (auto& f : callbacks)
      f(bytes.error());
    return;
  }
  s.running = true;
  request(setup_.store, caf::infinite, save_atom::value, setup_.type,
          setup_.key, version_, setup_.family, *bytes)
    .then(
      [this, callbacks, written = *bytes](uint64_t version) mutable {
        saves_->running = false;
        version_ = version;
        saves_->last_saved = std::move(written);
        for (auto& f : callbacks)
          f(caf::none);
        start_save();
      },
      [this, callbacks](caf::error& err) {
        saves_->running = false;
        for (auto& f : callbacks)
          f(err);
        if (err == errc::state_conflict)
          fail(err); // a newer activation saved: this one is stale
        else
          start_save();
      });
}

void entity_base::passivate() {
  caf::anon_send(setup_.host, idle_atom::value, setup_.type, setup_.key);
}

void entity_base::fail(caf::error why) {
  saves_->ending = true;
  // Every request (those skipped while loading too) gets `why` until the
  // host, asked to, stops this activation: what reached it before the stop
  // is answered, what comes after goes to the next activation.
  set_default_handler(
    [why](caf::scheduled_actor*,
          caf::message_view&) -> caf::result<caf::message> { return why; });
  become([this, why](stop_atom) { quit(why); });
  caf::anon_send(setup_.host, idle_atom::value, setup_.type, setup_.key);
}

} // namespace ferry::detail
