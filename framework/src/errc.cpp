#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error_render.hpp"
#include "ferry/serializers/errc.hpp"
#include "ferry/store/errc.hpp"

#include <caf/message.hpp>

namespace ferry {

std::string to_string(errc x) {
  switch (x) {
  case errc::none:
    return "none";
  case errc::connect_failed:
    return "connect_failed";
  case errc::handshake_failed:
    return "handshake_failed";
  case errc::no_common_family:
    return "no_common_family";
  case errc::family_refused:
    return "family_refused";
  case errc::unregistered_type:
    return "unregistered_type";
  case errc::message_too_large:
    return "message_too_large";
  case errc::link_down:
    return "link_down";
  case errc::no_such_actor:
    return "no_such_actor";
  case errc::transfer_failed:
    return "transfer_failed";
  case errc::invalid_config:
    return "invalid_config";
  case errc::decode_failed:
    return "decode_failed";
  case errc::send_timeout:
    return "send_timeout";
  case errc::too_many_proxies:
    return "too_many_proxies";
  case errc::too_many_actors:
    return "too_many_actors";
  case errc::receiver_full:
    return "receiver_full";
  case errc::type_mismatch:
    return "type_mismatch";
  case errc::lane_failed:
    return "lane_failed";
  case errc::already_linked:
    return "already_linked";
  case errc::cluster_refused:
    return "cluster_refused";
  case errc::unasked_response:
    return "unasked_response";
  case errc::too_many_requests:
    return "too_many_requests";
  case errc::state_conflict:
    return "state_conflict";
  case errc::state_store_failed:
    return "state_store_failed";
  case errc::unknown_entity_type:
    return "unknown_entity_type";
  case errc::invalid_entity_key:
    return "invalid_entity_key";
  case errc::entity_unavailable:
    return "entity_unavailable";
  }
  return "errc(" + std::to_string(static_cast<int>(x)) + ")";
}

std::string render(const caf::error& x) {
  if (!x)
    return caf::to_string(x); // "none": CAF's accessors need an error
  if (x.category() == caf::atom("ferry_ser"))
    return serializers::render(x);
  if (x.category() == caf::atom("ferry_sto"))
    return store::render(x);
  if (x.category() != caf::atom("ferry_fw"))
    return caf::to_string(x);
  return serializers::detail::render_error(
    x, "ferry_fw", to_string(static_cast<errc>(x.code())));
}

} // namespace ferry
