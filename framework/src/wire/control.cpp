// ferry's control frames: their fields (see wire/control.hpp and
// docs/wire-format.md).
#include "wire/control.hpp"

namespace ferry::detail {

// -- handshake ----------------------------------------------------------------

void intro::write(wire::writer& out) const {
  out.le32(protocol);
  out.le64(node_id);
  out.str(node_name);
  out.str(host_id);
  out.str(store_name);
  out.u8(has_store ? 1 : 0);
  out.le64(store_token);
}

caf::error intro::read(wire::reader& in) {
  protocol = in.le32();
  node_id = in.le64();
  node_name = in.str();
  if (!in.ok() || protocol != wire_protocol_version)
    return in.failure();
  host_id = in.str();
  store_name = in.str();
  has_store = in.boolean();
  store_token = in.le64();
  return in.finish();
}

void hello::write(wire::writer& out) const {
  out.strs(serializers);
  out.strs(deserializers);
  out.strs(decodable);
  out.le64(default_actor);
  out.le64(window_bytes);
  out.le64(window_messages);
  out.strs(type_names);
  out.strs(type_shapes);
  out.str(lane);
  out.strs(compressions);
}

caf::error hello::read(wire::reader& in) {
  serializers = in.strs();
  deserializers = in.strs();
  decodable = in.strs();
  default_actor = in.le64();
  window_bytes = in.le64();
  window_messages = in.le64();
  type_names = in.strs();
  type_shapes = in.strs();
  lane = in.str();
  compressions = in.strs();
  if (in.ok() && type_names.size() != type_shapes.size())
    in.fail(std::to_string(type_names.size()) + " type names but " +
            std::to_string(type_shapes.size()) + " type shapes");
  return in.finish();
}

void refuse::write(wire::writer& out) const {
  out.error(reason);
}

caf::error refuse::read(wire::reader& in) {
  reason = in.error();
  return in.finish();
}

// -- a link's control messages ------------------------------------------------

void credit::write(wire::writer& out) const {
  out.le64(messages);
  out.le64(bytes);
  out.le64(delivered);
}

caf::error credit::read(wire::reader& in) {
  messages = in.le64();
  bytes = in.le64();
  delivered = in.le64();
  return in.finish();
}

void down_notice::write(wire::writer& out) const {
  out.le64(actor);
  out.error(reason);
}

caf::error down_notice::read(wire::reader& in) {
  actor = in.le64();
  reason = in.error();
  return in.finish();
}

void exit_request::write(wire::writer& out) const {
  out.le64(actor);
  out.le64(source);
  out.error(reason);
}

caf::error exit_request::read(wire::reader& in) {
  actor = in.le64();
  source = in.le64();
  reason = in.error();
  return in.finish();
}

void link_request::write(wire::writer& out) const {
  out.le64(actor);
  out.le64(partner);
  out.u8(establish ? 1 : 0);
}

caf::error link_request::read(wire::reader& in) {
  actor = in.le64();
  partner = in.le64();
  establish = in.boolean();
  return in.finish();
}

void refusal::write(wire::writer& out) const {
  out.le64(target);
  out.error(reason);
}

caf::error refusal::read(wire::reader& in) {
  target = in.le64();
  reason = in.error();
  return in.finish();
}

void transfer_done::write(wire::writer& out) const {
  out.le64(transfer);
}

caf::error transfer_done::read(wire::reader& in) {
  transfer = in.le64();
  return in.finish();
}

// -- requests and answers -----------------------------------------------------

void lookup::write(wire::writer& out) const {
  out.le64(request);
  out.str(name);
}

caf::error lookup::read(wire::reader& in) {
  request = in.le64();
  name = in.str();
  return in.finish();
}

void spawn_request::write_to(wire::out_frame& out) const {
  auto w = out.fields();
  w.le64(request);
  w.str(type_name);
  write_message(out, args);
}

caf::error spawn_request::read(wire::reader& in) {
  request = in.le64();
  type_name = in.str();
  if (!in.ok())
    return in.failure();
  // Arguments never land in the store: a spawn decodes them without pulls.
  if (auto err = read_message(in, args, nullptr))
    return err;
  return in.finish();
}

wire::out_frame spawn_frame(const spawn_request& x) {
  wire::out_frame result{spawn_request::type};
  x.write_to(result);
  result.finish();
  return result;
}

void chunk_request::write(wire::writer& out) const {
  out.le64(request);
  out.le64(transfer);
  out.le64(offset);
  out.le64(length);
}

caf::error chunk_request::read(wire::reader& in) {
  request = in.le64();
  transfer = in.le64();
  offset = in.le64();
  length = in.le64();
  return in.finish();
}

void relay_request::write(wire::writer& out) const {
  out.le64(request);
  out.le64(key);
  out.le64(offset);
  out.le64(length);
}

caf::error relay_request::read(wire::reader& in) {
  request = in.le64();
  key = in.le64();
  offset = in.le64();
  length = in.le64();
  return in.finish();
}

void actor_id_answer::write(wire::writer& out) const {
  out.le64(request);
  out.le64(actor);
}

caf::error actor_id_answer::read(wire::reader& in) {
  request = in.le64();
  actor = in.le64();
  return in.finish();
}

void failed_answer::write(wire::writer& out) const {
  out.le64(request);
  out.error(reason);
}

caf::error failed_answer::read(wire::reader& in) {
  request = in.le64();
  reason = in.error();
  return in.finish();
}

wire::out_frame chunk_frame(uint64_t request, std::span<const std::byte> bytes,
                            const std::shared_ptr<const void>& keep_alive) {
  wire::out_frame result{wire::frame_type::chunk};
  result.fields().le64(request);
  result.append(bytes, keep_alive);
  result.finish();
  return result;
}

} // namespace ferry::detail
