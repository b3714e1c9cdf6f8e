// A `caf::message` whose large vector goes back to the vector pool
// (ferry/serializers/vector_pool.hpp) when the message's last reference
// drops; a small vector travels in a message from the block pool
// (pooled_message.hpp). Not API.
#pragma once

#include "ferry/serializers/detail/fresh_memory.hpp"
#include "ferry/serializers/detail/pooled_message.hpp"
#include "ferry/serializers/detail/vector_pool.hpp"

#include <caf/detail/tuple_vals.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

#include <tuple>
#include <utility>
#include <vector>

namespace ferry::serializers::detail {

/// Message content holding one `std::vector<E>` that goes back to the pool
/// when the content is destroyed. To CAF it is the same as
/// `caf::make_message(vector)`: same type token, same element types.
template <class E>
class recycling_vector_vals final
  : public caf::detail::tuple_vals_impl<caf::detail::message_data,
                                        std::vector<E>> {
public:
  using super =
    caf::detail::tuple_vals_impl<caf::detail::message_data, std::vector<E>>;

  explicit recycling_vector_vals(std::vector<E>&& xs) : super(std::move(xs)) {
    // nop
  }

  recycling_vector_vals(const recycling_vector_vals&) = default;

  ~recycling_vector_vals() override {
    give_vector(std::move(std::get<0>(this->data())));
  }

  using super::copy;

  recycling_vector_vals* copy() const override {
    auto& xs = std::get<0>(this->data());
    std::vector<E> fresh;
    assign_fresh(fresh, xs.data(), xs.size());
    return new recycling_vector_vals(std::move(fresh));
  }
};

/// Returns a message holding `xs`; when `xs` is large enough to be pooled,
/// its memory goes back to the pool with the message's last reference.
template <class E>
caf::message recycling_message(std::vector<E>&& xs) {
  if (!pool_keeps(xs.capacity() * sizeof(E)))
    return make_pooled_message(std::move(xs));
  caf::message::data_ptr content{new recycling_vector_vals<E>(std::move(xs)),
                                 false};
  return caf::message{std::move(content)};
}

} // namespace ferry::serializers::detail
