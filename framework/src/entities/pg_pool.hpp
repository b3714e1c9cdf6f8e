// pg_pool: at most `size` PostgreSQL connections, lent to one call each.
//
// `take` lends an idle connection, or opens one while fewer than `size`
// exist, or waits until a call gives one back. Connections open lazily and
// again after a failure: a lent connection that comes back `broken` (its
// status bad, or left inside a transaction by a failed call) is closed, and
// an idle one found `stale` (its server ended it, e.g. on a restart) is
// closed when taken and replaced by a new one. So after the server comes
// back, the next call works without reopening the store.
//
// Thread-safety: `take` may be called from any thread; a lent connection
// belongs to its borrower until the `borrowed` handle ends. One mutex
// guards the idle list and the count; connecting happens outside it.
#pragma once

#include "entities/pg_connection.hpp"
#include "thread_safety.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ferry::detail::entities {

class pg_pool {
public:
  /// A connection lent to one call; goes back to the pool (or is closed
  /// when broken) at the end of its scope.
  class borrowed {
  public:
    borrowed(pg_pool* pool, std::unique_ptr<pg_connection> conn)
      : pool_(pool),
        conn_(std::move(conn)) {
      // nop
    }

    borrowed(borrowed&& other) noexcept = default;
    borrowed& operator=(borrowed&&) = delete;
    borrowed(const borrowed&) = delete;
    borrowed& operator=(const borrowed&) = delete;

    ~borrowed() {
      if (pool_ != nullptr && conn_ != nullptr)
        pool_->give_back(std::move(conn_));
    }

    pg_connection* operator->() const { return conn_.get(); }

  private:
    pg_pool* pool_;
    std::unique_ptr<pg_connection> conn_;
  };

  /// A pool for the store `where` at `conninfo`, each connection preparing
  /// `statements`.
  pg_pool(std::string where, std::string conninfo, size_t size,
          std::chrono::seconds connect_timeout,
          std::vector<pg_statement> statements);

  pg_pool(const pg_pool&) = delete;
  pg_pool& operator=(const pg_pool&) = delete;

  /// Lends a connection, opening one when needed (waits for a free one
  /// when `size` are lent). Fails when connecting fails.
  caf::expected<borrowed> take();

private:
  void give_back(std::unique_ptr<pg_connection> conn);

  // -- constant after construction --------------------------------------------

  const std::string where_;
  const std::string conninfo_;
  const size_t size_;
  const std::chrono::seconds connect_timeout_;
  const std::vector<pg_statement> statements_;

  // -- protected by mtx_ --------------------------------------------------------

  mutex mtx_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<pg_connection>> idle_ FERRY_GUARDED_BY(mtx_);
  /// Connections that exist or are being opened (idle and lent).
  size_t count_ FERRY_GUARDED_BY(mtx_) = 0;
};

} // namespace ferry::detail::entities
