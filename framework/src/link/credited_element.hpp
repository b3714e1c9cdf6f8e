// credit_token and credited_element: credit that goes back when a message
// has been processed.
//
// Every message a node takes off a link holds a `credit_token` for its
// `wire_size`. The token travels inside the `credited_element` that carries
// the message into the target actor's mailbox, so its destructor runs when
// the actor has processed (or dropped) the message: then the credit goes
// back to the sending node (`link_state::return_credit`), and the message
// leaves what the link holds of the peer's (`held_limits`). A refused
// message releases its token at once.
//
// Thread-safety: a token is owned by one element at a time; its release may
// run on any thread. Elements are allocated from a `block_pool` of at most
// 1024 blocks. The link is held weakly: a token outliving its link returns
// nothing.
#pragma once

#include <caf/mailbox_element.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace ferry::detail {

class link_state;

/// Returns `bytes` messages' worth of credit to the sending node when
/// released; a `held` message also leaves what the link holds of the peer's.
class credit_token {
public:
  credit_token() = default;
  credit_token(std::weak_ptr<link_state> link, uint64_t bytes, bool held)
    : link_(std::move(link)),
      bytes_(bytes),
      held_(held) {
    // nop
  }
  credit_token(credit_token&& other) noexcept
    : link_(std::move(other.link_)),
      bytes_(std::exchange(other.bytes_, 0)),
      held_(other.held_) {
    // nop
  }
  credit_token& operator=(credit_token&&) = delete;
  ~credit_token() { release(); }

  /// Returns the credit (and what the message held) now; nothing later.
  void release();

private:
  std::weak_ptr<link_state> link_;
  uint64_t bytes_ = 0;
  bool held_ = false;
};

/// A mailbox element that returns link credit when destroyed, i.e. after the
/// receiving actor processed (or dropped) it.
class credited_element final : public caf::mailbox_element {
public:
  credited_element(caf::strong_actor_ptr sender, caf::message_id mid,
                   caf::message content, credit_token token);

  caf::type_erased_tuple& content() override;
  const caf::type_erased_tuple& content() const override;
  caf::message move_content_to_message() override;
  caf::message copy_content_to_message() const override;

  /// Elements come from a bounded free list shared by all threads (one per
  /// message taken off a link; made on the thread reading the link, destroyed
  /// on the receiving actor's): a message costs no allocation for its element
  /// while the list has one.
  static void* operator new(std::size_t size);
  static void operator delete(void* ptr, std::size_t size) noexcept;

private:
  caf::message msg_;
  caf::empty_type_erased_tuple empty_;
  credit_token token_;
};

} // namespace ferry::detail
