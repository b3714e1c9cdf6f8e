// relay_sources: the objects a node relays (see link/relay_sources.hpp).
#include "link/relay_sources.hpp"

#include "ferry/errc.hpp"

#include <vector>

namespace ferry::detail {

relay_sources::relay_sources(std::string node_name,
                             std::chrono::steady_clock::duration linger)
  : node_name_(std::move(node_name)), linger_(linger) {
  // nop
}

std::shared_ptr<relay_source>
relay_sources::open(uint64_t key, std::span<const std::byte> bytes,
                    std::shared_ptr<landing_buffer> buffer,
                    const std::string& owner, uint64_t max_chunk) {
  if (key == 0)
    return nullptr;
  std::lock_guard<std::mutex> guard{mtx_};
  auto& slot = sources_[key];
  if (slot)
    return nullptr;
  slot = std::make_shared<relay_source>(bytes, std::move(buffer), owner,
                                        node_name_, max_chunk);
  return slot;
}

void relay_sources::close(uint64_t key,
                          const std::shared_ptr<relay_source>& source,
                          const caf::error& why) {
  if (!source->failed(why))
    return; // sealed: kept for its linger
  std::lock_guard<std::mutex> guard{mtx_};
  auto i = sources_.find(key);
  if (i != sources_.end() && i->second == source)
    sources_.erase(i);
}

void relay_sources::serve(const relay_request& req,
                          const std::string& requester,
                          relay_source::reply_fn reply) {
  std::shared_ptr<relay_source> source;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto i = sources_.find(req.key); i != sources_.end())
      source = i->second;
  }
  if (!source) {
    reply(caf::make_error(errc::transfer_failed,
                          "node " + node_name_
                            + " holds no object under the relay key node "
                            + requester
                            + " named (never pulled here, or no longer "
                              "kept); pull it from its owner"));
    return;
  }
  source->serve(requester, req.offset, req.length, req.landing,
                std::move(reply));
}

void relay_sources::sweep() {
  auto cutoff = relay_source::clock::now() - linger_;
  std::vector<std::shared_ptr<relay_source>> dropped; // released after
  std::lock_guard<std::mutex> guard{mtx_};
  std::erase_if(sources_, [&](auto& x) {
    if (!x.second->idle_since(cutoff))
      return false;
    dropped.emplace_back(std::move(x.second));
    return true;
  });
}

size_t relay_sources::drop_sealed() {
  std::vector<std::shared_ptr<relay_source>> dropped; // released after
  std::lock_guard<std::mutex> guard{mtx_};
  std::erase_if(sources_, [&](auto& x) {
    if (!x.second->idle_since(relay_source::clock::time_point::max()))
      return false;
    dropped.emplace_back(std::move(x.second));
    return true;
  });
  return dropped.size();
}

void relay_sources::clear() {
  decltype(sources_) dropped;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    dropped.swap(sources_);
  }
  for (auto& [key, source] : dropped)
    source->failed(caf::make_error(errc::link_down,
                                   "node " + node_name_ + " shuts down"));
}

size_t relay_sources::size() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return sources_.size();
}

} // namespace ferry::detail
