// readers: threads reading same-host lanes (see lane/readers.hpp).
#include "lane/readers.hpp"

#include "ferry/errc.hpp"

#include <caf/binary_deserializer.hpp>

#include <string>
#include <system_error>

namespace ferry::detail::lane {

namespace {

/// How long a read waits before it looks at the ring's state again, and
/// while a backlog waits for room in the peer's ring.
constexpr std::chrono::milliseconds read_wait{200};
constexpr std::chrono::milliseconds backlog_wait{1};

thread_local bool reader_thread = false;

void run(const std::shared_ptr<ring>& in, caf::actor_system& sys,
         uint64_t max_record, const readers::deliver_fn& deliver,
         const readers::refused_fn& refused, const readers::ended_fn& ended,
         const readers::backlog& out) {
  reader_thread = true;
  std::vector<std::byte> record;
  for (;;) {
    auto pending = out.pending->load(std::memory_order_relaxed);
    if (pending)
      out.drain();
    switch (in->read(record, max_record, pending ? backlog_wait : read_wait)) {
    case ring::status::empty:
    case ring::status::full: // (writes only)
      continue;
    case ring::status::closed:
      ended(caf::none);
      return;
    case ring::status::corrupt:
      ended(caf::make_error(errc::lane_failed,
                            "the peer broke same-host lane " + in->name() +
                              " (a counter out of range or a record over " +
                              std::to_string(max_record) +
                              " bytes); the link goes down"));
      return;
    case ring::status::done:
      break;
    }
    caf::binary_deserializer source{
      sys, reinterpret_cast<const char*>(record.data()), record.size()};
    caf::message msg;
    if (auto err = source(msg)) {
      refused(caf::make_error(errc::decode_failed,
                              "a record of " + std::to_string(record.size()) +
                                " bytes on same-host lane " + in->name() +
                                " is not a message: " + caf::to_string(err)));
      continue;
    }
    if (source.remaining() != 0) {
      refused(caf::make_error(errc::decode_failed,
                              "a record on same-host lane " + in->name() +
                                " has " + std::to_string(source.remaining()) +
                                " bytes after its message"));
      continue;
    }
    deliver(std::move(msg));
  }
}

} // namespace

bool on_reader_thread() noexcept {
  return reader_thread;
}

readers::~readers() {
  stop_all();
}

void readers::start(std::shared_ptr<ring> in, caf::actor_system& sys,
                    uint64_t max_record, deliver_fn deliver, refused_fn refused,
                    ended_fn ended, backlog out) {
  auto shared = std::move(in);
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto on_failure = ended;
  std::string failure;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    reap_locked();
    try {
      std::thread thread{
        [shared, done, &sys, max_record, deliver = std::move(deliver),
         refused = std::move(refused), ended = std::move(ended),
         out = std::move(out)]() mutable {
          run(shared, sys, max_record, deliver, refused, ended, out);
          out.drain = nullptr;
          // The actors these hold are let go on this thread, before it is
          // joined.
          deliver = nullptr;
          refused = nullptr;
          ended = nullptr;
          done->store(true);
        }};
      entries_.push_back(entry{shared, std::move(done), std::move(thread)});
      return;
    } catch (const std::system_error& e) {
      failure = e.what();
    }
  }
  // Without a reader nothing would take the peer's messages: close the
  // ring, so that the peer's side goes down too, and take this side down.
  shared->close();
  on_failure(caf::make_error(errc::lane_failed,
                             "cannot start the thread that reads same-host "
                             "lane " +
                               shared->name() + ": " + failure +
                               " (too many threads for this process?)"));
}

void readers::stop_all() {
  std::vector<entry> entries;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    entries.swap(entries_);
  }
  for (auto& x : entries)
    x.in->close();
  for (auto& x : entries)
    if (x.thread.joinable())
      x.thread.join();
}

void readers::reap_locked() {
  for (auto i = entries_.begin(); i != entries_.end();) {
    if (i->done->load()) {
      i->thread.join();
      i = entries_.erase(i);
    } else {
      ++i;
    }
  }
}

} // namespace ferry::detail::lane
