// handshake: intros, hellos and the welcome that make a link (see
// node/handshake.hpp and docs/wire-format.md, "Handshake").
#include "node/handshake.hpp"

#include "node/node_impl.hpp"
#include "transport/tls_context.hpp"
#include "transport/tls_stream.hpp"

#include "ferry/errc.hpp"

#include "ferry/serializers/detail/error.hpp"

#include <algorithm>

namespace ferry::detail {

using serializers::detail::list_names;
using wire::frame_type;

namespace {

/// Families of `prefs` (in order) that the peer accepts and can decode.
std::vector<std::string> meet(const std::vector<std::string>& prefs,
                              const std::vector<std::string>& accepted,
                              const std::vector<std::string>& decodable) {
  std::vector<std::string> result;
  for (auto& family : prefs)
    if (std::find(accepted.begin(), accepted.end(), family) != accepted.end() &&
        std::find(decodable.begin(), decodable.end(), family) !=
          decodable.end())
      result.push_back(family);
  return result;
}

/// The error of a link without a common family in one direction.
caf::error no_common_family(const std::string& sender,
                            const std::string& receiver,
                            const std::vector<std::string>& prefs,
                            const std::vector<std::string>& allowed,
                            const std::vector<std::string>& decodable) {
  // Families both lists name that the receiver has no decoder for.
  std::vector<std::string> missing;
  for (auto& family : meet(prefs, allowed, prefs))
    if (std::find(decodable.begin(), decodable.end(), family) ==
        decodable.end())
      missing.push_back(family);
  return caf::make_error(
    errc::no_common_family,
    "node " + sender + " sends with serializers " + list_names(prefs) +
      " but node " + receiver + " accepts only deserializers " +
      list_names(allowed) +
      (missing.empty()
         ? std::string{}
         : ", and of those it cannot decode " + list_names(missing) +
             " (no such family registered there)") +
      "; add a common family to one of the lists (ferry.links." + receiver +
      ".serializers on " + sender + " or ferry.links." + sender +
      ".deserializers on " + receiver + ")");
}

} // namespace

// -- connect_wait -------------------------------------------------------------

void connect_wait::finish(outcome x) {
  {
    lock_guard guard{mtx_};
    if (result_)
      return;
    result_ = std::move(x);
  }
  cv_.notify_all();
}

std::optional<connect_wait::outcome>
connect_wait::wait(std::chrono::steady_clock::time_point deadline) {
  unique_lock guard{mtx_};
  while (!result_)
    if (cv_.wait_until(guard.native(), deadline) == std::cv_status::timeout)
      break; // nothing when the deadline passed
  return result_;
}

// -- node_impl's parts --------------------------------------------------------

intro node_impl::make_intro() const {
  intro result;
  result.node_id = id_;
  result.node_name = cfg_.node_name;
  result.host_id = cfg_.host_id;
  result.store_name = cfg_.store_name;
  result.has_store = store_.has_value();
  result.store_token = store_ ? store_->token() : 0;
  return result;
}

hello node_impl::make_hello(const link_config& cfg) const {
  hello result;
  result.serializers = cfg.serializers;
  result.deserializers = cfg.deserializers;
  result.decodable = registry_->families();
  result.default_actor = exposed_.default_id();
  result.window_bytes = cfg.window_bytes;
  result.window_messages = cfg.window_messages;
  result.compressions = {"lz4", "zstd"};
  for (auto& type : registry_->type_shapes()) {
    result.type_names.push_back(std::move(type.name));
    result.type_shapes.push_back(std::move(type.shape));
  }
  return result;
}

bool node_impl::shares_store_with(const intro& peer) const {
  return store_.has_value() && peer.has_store && peer.host_id == cfg_.host_id &&
         peer.store_name == cfg_.store_name &&
         peer.store_token == store_->token();
}

const link_config& node_impl::config_for(const std::string& name,
                                         const std::string& address) const {
  // A config set for the name wins; a connect may have one for the address.
  if (cfg_.links.count(name) != 0 || address.empty())
    return cfg_.link_for(name);
  return cfg_.link_for(address);
}

// -- handshake ----------------------------------------------------------------

handshake::handshake(node_impl& node, std::string address,
                     std::shared_ptr<connect_wait> waiter)
  : node_(node),
    address_(std::move(address)),
    waiter_(std::move(waiter)) {
  // nop
}

std::string handshake::who() const {
  std::string where = "an unknown address";
  if (auto conn = conn_.lock())
    where = conn->peer_address();
  if (peer_intro_.node_name.empty())
    return "the peer at " + where;
  return "node '" + peer_intro_.node_name + "' at " + where;
}

void handshake::report(connect_wait::outcome x) {
  if (reported_)
    return;
  reported_ = true;
  if (waiter_)
    waiter_->finish(std::move(x));
}

void handshake::on_open(net::connection& conn) {
  conn_ = conn.weak_from_this();
  conn.send(wire::make_frame(node_.make_intro()));
}

void handshake::on_closed(net::connection& conn, const caf::error& why) {
  if (offered_) {
    offered_->unlink();
    offered_.reset();
  }
  caf::error failure = why;
  // A TLS connection that failed before the intros says why from OpenSSL's
  // side: log it where the tests and operators look. A connection this
  // node refused was logged when it refused.
  if (refused_) {
    // nop
  } else if (conn.is_tls() && step_ == step::intro) {
    std::string sentence;
    auto* s = dynamic_cast<net::tls_stream*>(conn.get_stream());
    if (s != nullptr)
      sentence = s->explain();
    if (sentence.empty() && why)
      sentence = render(why);
    // With TLS 1.3 the connecting side finishes its handshake before the
    // accepting side checked its certificate; a refusal then closes the
    // connection, and the reset that makes can overtake the alert.
    if (!conn.server() && s != nullptr && s->handshake_done() &&
        sentence.find("TLS alert") == std::string::npos) {
      auto own =
        node_.tls() != nullptr ? node_.tls()->own_problem() : std::string{};
      sentence =
        "the node at " + conn.peer_address() +
        " closed the connection after the TLS handshake, before "
        "ferry's own: it refused this node's certificate or ended "
        "the connection, and no TLS alert saying why arrived (a "
        "reset can overtake it; that node's log has the reason)" +
        (own.empty() ? std::string{} : "; this node's certificate is " + own);
    }
    if (!sentence.empty()) {
      node_.log_unlinked(conn.server() ? "TLS: " + sentence
                                       : "TLS: connecting to " + address_ +
                                           ": " + sentence);
      failure = caf::make_error(errc::handshake_failed,
                                conn.server() ? sentence
                                              : "TLS link to " + address_ +
                                                  " refused: " + sentence);
    }
  } else if (!conn.is_tls() && step_ == step::intro && why && conn.server()) {
    // A TLS node took the connection for plain: it did not begin with TLS.
    if (node_.tls() != nullptr)
      node_.log_unlinked("TLS: refused the peer at " + conn.peer_address() +
                         ": it does not speak TLS, and this node links "
                         "over TLS only (" +
                         render(why) + ")");
    else
      node_.log_unlinked("closed a connection from " + conn.peer_address() +
                         " before its handshake: " + render(why));
  }
  if (!failure)
    failure = caf::make_error(errc::handshake_failed,
                              who() + " closed the connection during the "
                                      "handshake");
  report({nullptr, std::move(failure), peer_intro_.node_id});
}

uint64_t handshake::max_body(frame_type type) const {
  if (next_)
    return next_->max_body(type);
  switch (type) {
  case frame_type::intro:
    return 64 * 1024;
  case frame_type::hello:
    // The shapes of every registered type.
    return uint64_t{64} << 20;
  case frame_type::refuse:
    return uint64_t{2} << 20;
  default:
    return 0;
  }
}

caf::error handshake::on_frame(frame_type type,
                               std::span<const std::byte> body) {
  if (next_)
    return next_->on_frame(type, body);
  auto out_of_order = [&] {
    return caf::make_error(errc::handshake_failed,
                           who() + " sent a " + wire::name_of(type) +
                             " frame out of the handshake's order");
  };
  switch (type) {
  case frame_type::intro:
    return step_ == step::intro ? on_intro(body) : out_of_order();
  case frame_type::hello:
    return step_ == step::hello ? on_hello(body) : out_of_order();
  case frame_type::welcome:
    return step_ == step::welcome ? on_welcome() : out_of_order();
  case frame_type::refuse:
    return on_refuse(body);
  case frame_type::heartbeat:
    return caf::none;
  default:
    return out_of_order();
  }
}

caf::error handshake::on_message(wire_message&& msg) {
  if (next_)
    return next_->on_message(std::move(msg));
  return caf::make_error(errc::handshake_failed,
                         who() + " sent a message before the handshake ended");
}

net::chunk_place handshake::chunk_landing(uint64_t request, uint64_t length) {
  if (next_)
    return next_->chunk_landing(request, length);
  return {};
}

caf::error handshake::on_chunk(uint64_t request, wire_bytes data, bool landed) {
  if (next_)
    return next_->on_chunk(request, std::move(data), landed);
  return caf::make_error(errc::handshake_failed,
                         who() + " sent a chunk before the handshake ended");
}

import_landing* handshake::imports() {
  return next_ ? next_->imports() : nullptr;
}

caf::error handshake::check_transport(net::connection& conn) {
  if (conn.is_tls()) {
    auto* s = dynamic_cast<net::tls_stream*>(conn.get_stream());
    auto why = s != nullptr ? s->check_name(peer_intro_.node_name)
                            : std::string{"not a TLS stream"};
    if (why.empty())
      return caf::none;
    auto line = "refused " + who() + ": " + why;
    node_.log_unlinked("TLS: " + line);
    return caf::make_error(errc::handshake_failed, line);
  }
  if (node_.tls() == nullptr ||
      node_.config_for(peer_intro_.node_name, address_).plain)
    return caf::none;
  auto line = "refused " + who() +
              ": it does not speak TLS (a plain node: its ferry.tls "
              "options are not set), and node " +
              node_.config().node_name +
              " refuses plain peers (it links over TLS only); set plain = "
              "true in the link config for that node (ferry.links) to "
              "allow a plain link to it";
  node_.log_unlinked("TLS: " + line);
  return caf::make_error(errc::handshake_failed, line);
}

caf::error handshake::on_intro(std::span<const std::byte> body) {
  wire::reader in{body, "intro frame"};
  if (auto err = peer_intro_.read(in))
    return refuse_with(
      caf::make_error(errc::handshake_failed, who() +
                                                " sent an intro this node "
                                                "cannot read: " +
                                                render(err)));
  auto conn = conn_.lock();
  if (!conn)
    return caf::none;
  auto& me = node_.config().node_name;
  if (peer_intro_.protocol != wire_protocol_version)
    return refuse_with(
      caf::make_error(errc::handshake_failed,
                      who() + " speaks ferry wire protocol " +
                        std::to_string(peer_intro_.protocol) + ", node " + me +
                        " speaks " + std::to_string(wire_protocol_version) +
                        "; run the same ferry version on both"));
  if (peer_intro_.node_id == 0 || peer_intro_.node_name.empty())
    return refuse_with(caf::make_error(
      errc::handshake_failed, who() + " sent an intro without a node id "
                                      "or a node name"));
  if (peer_intro_.node_id == node_.id())
    return refuse_with(caf::make_error(
      errc::handshake_failed,
      "node " + me + " connected to itself at " + conn->peer_address()));
  if (auto err = check_transport(*conn))
    return refuse_with(std::move(err));
  cfg_ = node_.config_for(peer_intro_.node_name, address_);
  auto mine = node_.make_hello(cfg_);
  if (cfg_.lane && node_.shares_store_with(peer_intro_)) {
    offered_ = node_.offer_lane(cfg_);
    if (offered_)
      mine.lane = offered_->name();
  }
  conn->send(wire::make_frame(mine));
  step_ = step::hello;
  return caf::none;
}

caf::error handshake::on_hello(std::span<const std::byte> body) {
  wire::reader in{body, "hello frame"};
  if (auto err = peer_hello_.read(in))
    return refuse_with(
      caf::make_error(errc::handshake_failed, who() +
                                                " sent a hello this node "
                                                "cannot read: " +
                                                render(err)));
  auto& me = node_.config().node_name;
  auto& peer = peer_intro_.node_name;
  send_families_ =
    meet(cfg_.serializers, peer_hello_.deserializers, peer_hello_.decodable);
  auto decodable = node_.registry().families();
  if (send_families_.empty())
    return refuse_with(no_common_family(me, peer, cfg_.serializers,
                                        peer_hello_.deserializers,
                                        peer_hello_.decodable));
  if (meet(peer_hello_.serializers, cfg_.deserializers, decodable).empty())
    return refuse_with(no_common_family(peer, me, peer_hello_.serializers,
                                        cfg_.deserializers, decodable));
  // The node with the lower id decides (node/handshake.hpp).
  if (node_.id() < peer_intro_.node_id)
    return link_up(true);
  step_ = step::welcome;
  return caf::none;
}

caf::error handshake::on_welcome() {
  return link_up(false);
}

caf::error handshake::link_up(bool welcome) {
  auto conn = conn_.lock();
  if (!conn)
    return caf::none;
  peer_info peer{peer_intro_, peer_hello_};
  std::shared_ptr<net::connection::handler> dispatch;
  auto admitted =
    node_.make_link(conn, peer, cfg_, send_families_, offered_, dispatch, [&] {
      if (welcome)
        conn->send(wire::make_frame(detail::welcome{}));
    });
  if (!admitted.link)
    return refuse_with(
      caf::make_error(errc::link_down, "node " + node_.config().node_name +
                                         " is shutting down"));
  if (!admitted.made) {
    // This node and the peer have a link already: it serves, this
    // connection closes without having carried anything.
    report({admitted.link, caf::none, peer_intro_.node_id});
    return refuse_with(caf::make_error(
      errc::already_linked,
      "node " + node_.config().node_name + " has a link with node " +
        peer_intro_.node_name +
        " already; this connection closes and that link serves"));
  }
  next_ = std::move(dispatch);
  step_ = step::linked;
  report({admitted.link, caf::none, peer_intro_.node_id});
  return caf::none;
}

caf::error handshake::on_refuse(std::span<const std::byte> body) {
  refuse x;
  wire::reader in{body, "refuse frame"};
  if (auto err = x.read(in))
    return err;
  if (!x.reason)
    x.reason = caf::make_error(errc::handshake_failed,
                               who() + " refused the connection");
  report({nullptr, std::move(x.reason), peer_intro_.node_id});
  if (auto conn = conn_.lock())
    conn->close(false);
  return caf::none;
}

caf::error handshake::refuse_with(caf::error why) {
  refused_ = true;
  if (auto conn = conn_.lock()) {
    conn->send(wire::make_frame(refuse{why}));
    conn->close(true);
  }
  report({nullptr, std::move(why), peer_intro_.node_id});
  return caf::none;
}

} // namespace ferry::detail
