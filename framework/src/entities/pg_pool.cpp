// pg_pool: see pg_pool.hpp.
#include "entities/pg_pool.hpp"

namespace ferry::detail::entities {

pg_pool::pg_pool(std::string where, std::string conninfo, size_t size,
                 std::chrono::seconds connect_timeout,
                 std::vector<pg_statement> statements)
  : where_(std::move(where)),
    conninfo_(std::move(conninfo)),
    size_(size),
    connect_timeout_(connect_timeout),
    statements_(std::move(statements)) {
  // nop
}

caf::expected<pg_pool::borrowed> pg_pool::take() {
  std::unique_ptr<pg_connection> stale;
  {
    unique_lock guard{mtx_};
    while (idle_.empty() && count_ >= size_)
      freed_.wait(guard.native());
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      if (!conn->stale())
        return borrowed{this, std::move(conn)};
      stale = std::move(conn); // closed outside the lock; its place is reused
    } else {
      ++count_;
    }
  }
  stale.reset();
  auto conn =
    pg_connection::connect(where_, conninfo_, connect_timeout_, statements_);
  if (!conn) {
    {
      lock_guard guard{mtx_};
      --count_;
    }
    freed_.notify_one();
    return std::move(conn.error());
  }
  return borrowed{this, std::move(*conn)};
}

void pg_pool::give_back(std::unique_ptr<pg_connection> conn) {
  bool keep = !conn->broken();
  if (!keep)
    conn.reset(); // closed outside the lock
  {
    lock_guard guard{mtx_};
    if (keep)
      idle_.push_back(std::move(conn));
    else
      --count_;
  }
  freed_.notify_one();
}

} // namespace ferry::detail::entities
