// Registration of ferry's wire types with CAF (see wire/registration.hpp).
#include "wire/registration.hpp"

#include "wire/control.hpp"
#include "wire/message.hpp"

namespace ferry::detail {

void register_wire_types(caf::actor_system_config& cfg) {
  // CAF 0.17 writes and reads every message's type as "@<>+" followed by its
  // elements' names, in a std::string: the two types on the data path keep
  // that within the string's 15 inline characters, so neither side allocates
  // for it (an allocation per message on each side with "ferry.message").
  cfg.add_message_type<wire_message>("ferry.msg")
    .add_message_type<wire_batch>("ferry.batch")
    .add_message_type<hello>("ferry.hello")
    .add_message_type<identify>("ferry.identify")
    .add_message_type<lookup>("ferry.lookup")
    .add_message_type<credit>("ferry.credit")
    .add_message_type<credit_probe>("ferry.probe")
    .add_message_type<down_notice>("ferry.down")
    .add_message_type<refusal>("ferry.refusal")
    .add_message_type<exit_request>("ferry.exit")
    .add_message_type<link_request>("ferry.link")
    .add_message_type<chunk_request>("ferry.chunk_req")
    .add_message_type<relay_request>("ferry.relay_req")
    .add_message_type<transfer_done>("ferry.xfer_done")
    .add_message_type<spawn_request>("ferry.spawn")
    .add_message_type<chunk_reply>("ferry.chunk");
}

} // namespace ferry::detail
