// The hand-written parts of ferry's control messages: hello and chunk_reply
// (see wire/control.hpp).
#include "wire/control.hpp"

#include "wire/read_context.hpp"

namespace ferry::detail {

namespace {

/// Applies `f` to the fields of `x` after its protocol.
template <class F>
auto hello_fields(F& f, hello& x) {
  return f(x.node_name, x.host_id, x.store_name, x.has_store, x.store_token,
           x.serializers, x.deserializers, x.decodable, x.gateway,
           x.default_actor, x.window_bytes, x.window_messages, x.link_token,
           x.type_names, x.type_shapes, x.lane);
}

} // namespace

// -- hello --------------------------------------------------------------------

caf::error hello::save(caf::serializer& sink) const {
  auto& self = const_cast<hello&>(*this);
  if (auto err = sink(self.protocol))
    return err;
  return hello_fields(sink, self);
}

caf::error hello::load(caf::deserializer& source) {
  if (auto err = source(protocol))
    return err;
  if (protocol != wire_protocol_version)
    return caf::none;
  return hello_fields(source, *this);
}

// -- chunk_reply --------------------------------------------------------------

caf::error chunk_reply::save(caf::serializer& sink) const {
  if (auto err = sink(const_cast<uint64_t&>(landing)))
    return err;
  return data.save(sink);
}

caf::error chunk_reply::load(caf::deserializer& source) {
  uint64_t n = 0;
  if (auto err = source(landing, n))
    return err;
  auto bin = dynamic_cast<caf::binary_deserializer*>(&source);
  landed = false;
  if (bin != nullptr && landing != 0 && n <= bin->remaining())
    if (auto* ctx = read_context_of(source))
      landed = ctx->land_chunk(landing, next_bytes(*bin, n));
  if (!landed)
    return data.load_body(source, n);
  bin->skip(static_cast<size_t>(n));
  data = wire_bytes{};
  return caf::none;
}

} // namespace ferry::detail
