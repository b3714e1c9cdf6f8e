// The ferry rows: a ferry node here and (ipc, tcp) one in a peer process.
//
// Each group uses one family: `link_config::serializers` and
// `deserializers` are `{family}` on both nodes, so every message (payloads
// and the receiver's acknowledgements) is encoded with it. ipc peers attach
// the same host store as this process (same `--ferry.store.name`), so large
// frames travel as store handles; tcp peers use a store of another name, so
// ferry sees two hosts and takes the cross-host path over loopback. inproc
// groups keep sender and receiver in one node: plain CAF, no encoding. tls
// groups are tcp groups whose nodes both set ferry.tls, with certificates
// for their names made by make_test_pki.sh (test_pki.hpp).
// `<family>+metrics` rows (--metrics) run with the Prometheus endpoint on in
// both nodes, and a thread here renders the metrics ten times a second.
#include "child.hpp"
#include "driver.hpp"
#include "ferry_parts.hpp"
#include "machine.hpp"
#include "test_pki.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"
#include "ferry/store/object_store.hpp"
#include "ferry/store/shared_array.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <stop_token>
#include <thread>

namespace ferry::bench {

void register_ferry_types(ferry::node_config& cfg) {
  cfg.add_message_type<bench_record>(record_type_name);
  cfg.add_message_type<store::shared_array<std::byte>>(shared_bytes_type_name);
}

std::optional<store::shared_array<std::byte>>
make_filled_array(ferry::node& n, uint64_t size, std::string& err) {
  auto* st = n.store();
  if (st == nullptr) {
    err = "this node has no store";
    return std::nullopt;
  }
  auto builder = st->create(size);
  if (!builder) {
    err = "store: " + ferry::render(builder.error());
    return std::nullopt;
  }
  auto bytes = builder->bytes();
  for (size_t i = 0; i < bytes.size(); i += 4096)
    std::memset(bytes.data() + i, static_cast<int>((i >> 12) & 0xff),
                std::min<size_t>(4096, bytes.size() - i));
  auto ref = builder->seal();
  if (!ref) {
    err = "store: " + ferry::render(ref.error());
    return std::nullopt;
  }
  auto arr = store::shared_array<std::byte>::from_ref(std::move(*ref));
  if (!arr) {
    err = ferry::render(arr.error());
    return std::nullopt;
  }
  return std::move(*arr);
}

namespace {

/// Quiet before each timed first message of a hand-off run: long enough
/// for every thread of both processes to go to sleep (the cost of a first
/// message stops growing after a few tens of milliseconds here), short
/// enough for 8 runs of two pauses to take under 2 s.
constexpr std::chrono::milliseconds handoff_pause{100};

std::string list_arg(const std::string& family) {
  return "[\"" + family + "\"]";
}

/// The ferry.tls flags of the node named `name`.
std::vector<std::string> tls_flags(const std::string& dir,
                                   const std::string& name) {
  auto files = credentials_of(dir, name);
  return {"--ferry.tls.certificate=" + files.certificate,
          "--ferry.tls.key=" + files.key,
          "--ferry.tls.ca-file=" + files.ca_file};
}

class ferry_group final : public group {
public:
  ferry_group(transport tr, const std::string& row_family,
              const bench_env& env)
    : family_(row_family) {
    // A `<family>+metrics` row: the family's, with both endpoints on.
    bool metrics = family_.ends_with(metrics_suffix);
    if (metrics)
      family_.resize(family_.size() - metrics_suffix.size());
    const auto& family = family_;
    register_ferry_types(cfg_);
    read_caf_application_ini(cfg_);
    if (metrics)
      cfg_.metrics_port = 0;
    cfg_.node_name = "bench-" + to_string(tr) + "-" + row_family;
    cfg_.store_name = env.store_name;
    cfg_.store_capacity = env.store_capacity;
    cfg_.store_prefault = true;
    if (tr != transport::inproc) {
      cfg_.default_link.serializers = {family};
      cfg_.default_link.deserializers = {family};
    }
    auto peer_name = "peer-" + to_string(tr) + "-" + row_family;
    bool tls = tr == transport::tls;
    if (tls) {
      make_certificates(env.pki_dir, {cfg_.node_name, peer_name});
      auto files = credentials_of(env.pki_dir, cfg_.node_name);
      cfg_.tls_certificate = files.certificate;
      cfg_.tls_key = files.key;
      cfg_.tls_ca_file = files.ca_file;
    }
    auto n = ferry::node::start(cfg_);
    if (!n)
      throw std::runtime_error("cannot start a ferry node: "
                               + ferry::render(n.error()));
    node_ = std::move(*n);
    if (metrics)
      scraper_ = std::jthread{[this](std::stop_token stop) { scrape(stop); }};
    if (tr == transport::inproc) {
      sink_ = spawn_sink(node_->system());
      dest_ = sink_;
      return;
    }
    peer_name_ = peer_name;
    bool ipc = tr == transport::ipc;
    std::vector<std::string> args{"--peer=ferry"};
    args.insert(args.end(), env.peer_place.begin(), env.peer_place.end());
    args.insert(args.end(), {
      "--address=" + env.peer_address,
      "--ferry.node-name=" + peer_name_,
      "--ferry.store.name=" + (ipc ? env.store_name : env.tcp_store_name),
      "--ferry.store.capacity="
        + std::to_string(ipc ? env.store_capacity : env.tcp_store_capacity),
      "--ferry.link.serializers=" + list_arg(family),
      "--ferry.link.deserializers=" + list_arg(family),
    });
    // Stores are warm for every row (the driver prefaults its own too),
    // but for a tcp store sized for 1 GiB copies: prefaulted, its 3.6 GiB
    // would stay resident through the whole tcp set, beside every peer's
    // 1 GiB buffers at the 1 GiB rows. (A CAF flag takes no value: absent
    // is false.)
    if (ipc || env.tcp_store_capacity <= (uint64_t{1} << 30))
      args.push_back("--ferry.store.prefault");
    if (metrics)
      args.push_back("--ferry.metrics.port=0");
    if (tls)
      for (auto& x : tls_flags(env.pki_dir, peer_name_))
        args.push_back(x);
    peer_ = std::make_unique<child>(args);
    auto port = peer_->wait_for("port ", std::chrono::seconds{60});
    if (!port)
      throw std::runtime_error("the ferry peer did not start");
    auto proxy = node_->remote_actor(env.peer_address,
                                     static_cast<uint16_t>(std::stoi(*port)));
    if (!proxy)
      throw std::runtime_error("cannot connect to the ferry peer: "
                               + ferry::render(proxy.error()));
    dest_ = *proxy;
    auto st = node_->stats(peer_name_);
    if (!st)
      throw std::runtime_error("no link to " + peer_name_);
    if (st->same_host != ipc)
      throw std::runtime_error(
        std::string{"the link to "} + peer_name_
        + (ipc ? " does not share the store" : " shares the store")
        + "; the transport would not be what its name says");
  }

  ~ferry_group() override {
    if (sink_)
      caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
    sink_ = nullptr;
    dest_ = nullptr;
    scraper_ = {}; // stops and joins before the node goes
    node_.reset();
    peer_.reset();
  }

  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    std::function<caf::message()> make_payload;
    if (c.type == payload_type::bytes) {
      make_payload = [msg = bytes_message(c.size, false)] { return msg; };
    } else if (c.type == payload_type::record) {
      make_payload = [msg = record_message(c.size)] { return msg; };
    } else {
      // A new store object per round: the trials of a set take turns, and
      // holding one object per trial for the whole set would fill the store.
      make_payload = [this, size = c.size] {
        std::string err;
        auto arr = make_array(size, err);
        if (!arr)
          throw std::runtime_error(err);
        return caf::make_message(std::move(*arr));
      };
    }
    auto before = std::make_shared<link_stats>();
    if (!peer_name_.empty())
      if (auto st = node_->stats(peer_name_))
        *before = *st;
    std::function<caf::actor()> new_sink;
    if (peer_name_.empty())
      new_sink = [this] {
        replace_sink(node_->system(), sink_);
        return dest_ = sink_;
      };
    trial_hooks hooks;
    hooks.reset = [this](uint64_t ack_every) { return reset(ack_every); };
    hooks.probe = [this, before]() -> std::string {
      if (peer_name_.empty())
        return {};
      auto st = node_->stats(peer_name_);
      if (!st)
        return "the link to the peer is down";
      if (st->send_errors > before->send_errors)
        return "ferry could not send a message (see its log above)";
      if (st->refused_by_peer > before->refused_by_peer)
        return "the peer refused a message (see its log above)";
      return {};
    };
    hooks.peak_rss = [this] { return peak_rss(); };
    hooks.finish = [this, before](measurement& m) {
      if (peer_name_.empty())
        return;
      auto st = node_->stats(peer_name_);
      if (!st
          || st->sent_by_family[family_] <= before->sent_by_family[family_]) {
        m.ok = false;
        m.error = "the link did not use family " + family_;
      }
    };
    return make_trial(node_->system(), dest_, std::move(make_payload), c.pat,
                      p, std::move(hooks), std::move(new_sink));
  }

  /// Time from the sender holding a sealed object to the receiver having
  /// read its first and last byte (the receiver's clock, CLOCK_MONOTONIC),
  /// beside a 64 B message sent the same way. Each run writes a fresh
  /// object, wakes the link with an untimed 64 B message, then times, each
  /// after `handoff_pause` of quiet: a 64 B message (`small_p50_us`) and the
  /// hand-off (the row's p50); then at once the same object again
  /// (`resend_p50_us`) and a 64 B message (`small_resend_p50_us`). So every
  /// hand-off meets the same state of the machine whatever the size (how
  /// long the receiver has slept is what a first message pays for: on this
  /// machine kind 300-400 µs after 100 ms of quiet, 65-150 µs right after
  /// another message), and the 64 B figure it is compared with meets it too.
  measurement handoff(const cell& c, const run_params& p) override {
    measurement m;
    if (!reset(1)) {
      m.error = "the receiver did not answer a reset";
      return m;
    }
    // Four series: hand-off, again at once, 64 B after the same quiet, and
    // 64 B at once.
    std::array<std::vector<double>, 4> series;
    caf::scoped_actor self{node_->system()};
    auto small = caf::make_message(std::vector<std::byte>(64));
    auto send = [&](const caf::message& msg) {
      auto us = timed_request(self, dest_, msg, p.timeout_seconds, m.error);
      if (us < 0 && m.error.empty())
        m.error = "no answer";
      return us;
    };
    for (int i = 0; i <= p.handoff_runs; ++i) {
      auto arr = make_array(c.size, m.error);
      if (!arr)
        return m;
      auto msg = caf::make_message(std::move(*arr));
      std::array<double, 4> us{};
      if (send(small) < 0)
        return m;
      std::this_thread::sleep_for(handoff_pause);
      us[2] = send(small);
      std::this_thread::sleep_for(handoff_pause);
      us[0] = send(msg);
      us[1] = send(msg);
      us[3] = send(small);
      if (std::any_of(us.begin(), us.end(), [](double x) { return x < 0; }))
        return m;
      if (i > 0) // the first run warms up
        for (size_t k = 0; k < us.size(); ++k)
          series[k].push_back(us[k]);
    }
    auto& times = series[0];
    m.resend_p50_us = median(series[1]);
    m.small_p50_us = median(series[2]);
    m.small_resend_p50_us = median(series[3]);
    m.ok = true;
    m.messages = times.size();
    m.p50_us = median(times);
    m.p99_us = quantile(times, 0.99);
    for (auto t : times)
      m.seconds += t / 1e6;
    m.msgs_per_s = m.p50_us > 0 ? 1e6 / m.p50_us : 0;
    m.rss_mb = peak_rss();
    return m;
  }

private:
  /// A sealed store object of `size` bytes, filled, as a shared array.
  std::optional<store::shared_array<std::byte>> make_array(uint64_t size,
                                                           std::string& err) {
    return make_filled_array(*node_, size, err);
  }

  bool reset(uint64_t ack_every) {
    if (peer_)
      return peer_->ask("reset " + std::to_string(ack_every), "ok").has_value();
    auto ok = reset_sink(node_->system(), sink_, ack_every);
    reset_peak_rss();
    return ok;
  }

  double peak_rss() {
    if (!peer_)
      return peak_private_rss_mb();
    auto answer = peer_->ask("rss", "rss ");
    return answer ? std::stod(*answer) : -1;
  }

  /// Renders this node's metrics ten times a second, as a scraper far
  /// more eager than Prometheus' default (the cost of a scrape lands in
  /// the row).
  void scrape(std::stop_token stop) {
    using namespace std::chrono_literals;
    while (!stop.stop_requested()) {
      rendered_ += node_->metrics_text().size();
      for (int i = 0; i < 10 && !stop.stop_requested(); ++i)
        std::this_thread::sleep_for(10ms);
    }
  }

  std::string family_;
  ferry::node_config cfg_;
  std::unique_ptr<ferry::node> node_;
  /// Bytes the scraper rendered (keeps the rendering from being dropped).
  std::atomic<uint64_t> rendered_{0};
  /// Declared after the node: stops before it goes.
  std::jthread scraper_;
  std::unique_ptr<child> peer_;
  std::string peer_name_;
  caf::actor sink_;
  caf::actor dest_;
};

} // namespace

std::unique_ptr<group> make_ferry_group(transport tr, const std::string& family,
                                        const bench_env& env) {
  return std::make_unique<ferry_group>(tr, family, env);
}

int ferry_peer_main(int argc, char** argv, const std::string& address) {
  ferry::node_config cfg;
  register_ferry_types(cfg);
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "ferry-bench peer: " << ferry::render(err) << '\n';
    return 2;
  }
  auto n = ferry::node::start(cfg);
  if (!n) {
    std::cerr << "ferry-bench peer: " << ferry::render(n.error()) << '\n';
    return 2;
  }
  auto sink = spawn_sink((*n)->system());
  auto port = (*n)->publish(sink, 0, address);
  if (!port) {
    std::cerr << "ferry-bench peer: " << ferry::render(port.error()) << '\n';
    return 1;
  }
  std::cout << "port " << *port << std::endl;
  // Broadcast rows link their receivers to each other (`connect`) and read
  // what each pulled from the others (`relayed`).
  ferry_peer_commands extra;
  extra.connect = [&n](const std::string& host,
                       uint16_t peer_port) -> std::string {
    auto proxy = (*n)->remote_actor(host, peer_port);
    return proxy ? std::string{} : ferry::render(proxy.error());
  };
  extra.relayed = [&n] {
    uint64_t total = 0;
    for (auto& st : (*n)->stats())
      total += st.bytes_relayed_by_peer;
    return total;
  };
  auto rc = serve_peer((*n)->system(), sink, extra);
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  return rc;
}

} // namespace ferry::bench
