// published_view: see cluster/published_view.hpp.
#include "cluster/published_view.hpp"

#include <caf/message_id.hpp>

namespace ferry::detail::cluster {

std::vector<member_info> published_view::members() const {
  lock_guard guard{mtx_};
  return members_;
}

void published_view::publish(std::vector<member_info> xs,
                             std::optional<uint64_t> leader, bool converged) {
  lock_guard guard{mtx_};
  members_ = std::move(xs);
  leader_ = leader;
  converged_ = converged;
}

void published_view::watch(const caf::actor& whom) {
  lock_guard guard{mtx_};
  watchers_.add(whom);
}

void published_view::unwatch(const caf::actor& whom) {
  lock_guard guard{mtx_};
  watchers_.remove(whom);
}

void published_view::tell(const caf::message& msg) {
  std::vector<caf::actor> to;
  {
    lock_guard guard{mtx_};
    to = watchers_.live();
  }
  for (auto& whom : to)
    whom->enqueue(nullptr, caf::make_message_id(), msg, nullptr);
}

void published_view::set_phi(std::map<uint64_t, double> phi) {
  lock_guard guard{mtx_};
  phi_ = std::move(phi);
}

void published_view::set_convergence(std::chrono::steady_clock::duration took) {
  lock_guard guard{mtx_};
  convergence_seconds_ = std::chrono::duration<double>(took).count();
}

cluster_figures published_view::figures(const std::string& name,
                                        uint64_t self) const {
  lock_guard guard{mtx_};
  return cluster_figures{
    members_, phi_, convergence_seconds_, leader_, converged_, name, self};
}

} // namespace ferry::detail::cluster
