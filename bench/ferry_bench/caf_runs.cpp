// The raw-caf baselines: plain CAF, no ferry at all. `raw-caf` runs on
// CAF's defaults; `raw-caf-tuned` gets every scheduler and work-stealing
// setting a default `ferry::node_config` holds (copied from one, so the
// baseline follows ferry's settings as they are) and the middleman settings
// of support/ferry_caf_settings.hpp (no BASP workers, heartbeats every 5 s,
// a 30 s connection timeout), on both sides. `caf-application.ini` comes
// after them in either case, as for ferry.
//
// inproc: one actor system, the sink and the driver in it. ipc and tcp (the
// same path for plain CAF: CAF's middleman over loopback): the sink lives in
// a peer process that publishes it; this process connects with
// `middleman().remote_actor`. Bytes travel as `std::vector<char>` (CAF
// serializes those with one memcpy), records through their CAF `inspect`.
#include "child.hpp"
#include "driver.hpp"
#include "machine.hpp"

#include "support/caf_connect.hpp"
#include "support/ferry_caf_settings.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <stdexcept>

namespace ferry::bench {

void register_caf_types(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  cfg.add_message_type<bench_record>(record_type_name);
}

namespace {

class caf_group final : public group {
public:
  caf_group(transport tr, bool tuned, const bench_env& env) {
    register_caf_types(cfg_);
    if (tuned)
      apply_ferry_caf_settings(cfg_);
    read_caf_application_ini(cfg_);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    if (tr == transport::inproc) {
      sink_ = spawn_sink(*sys_);
      dest_ = sink_;
      return;
    }
    std::vector<std::string> args{tuned ? "--peer=caf-tuned" : "--peer=caf"};
    args.insert(args.end(), env.peer_place.begin(), env.peer_place.end());
    args.push_back("--address=" + env.peer_address);
    peer_ = std::make_unique<child>(args);
    auto port = peer_->wait_for("port ", std::chrono::seconds{30});
    if (!port)
      throw std::runtime_error("the raw-caf peer did not start");
    auto remote = connect_caf(*sys_, env.peer_address,
                              static_cast<uint16_t>(std::stoi(*port)));
    if (!remote)
      throw std::runtime_error("cannot connect to the raw-caf peer: "
                               + sys_->render(remote.error()));
    dest_ = *remote;
  }

  ~caf_group() override {
    if (sink_)
      caf::anon_send_exit(sink_, caf::exit_reason::user_shutdown);
    dest_ = nullptr;
    sink_ = nullptr;
    peer_.reset();
  }

  std::unique_ptr<trial> start(const cell& c, const run_params& p) override {
    caf::message payload;
    if (c.type == payload_type::bytes)
      payload = bytes_message(c.size, true);
    else if (c.type == payload_type::record)
      payload = record_message(c.size);
    else
      throw std::runtime_error("plain CAF cannot send a shared_array");
    std::function<caf::actor()> new_sink;
    if (!peer_)
      new_sink = [this] {
        replace_sink(*sys_, sink_);
        return dest_ = sink_;
      };
    trial_hooks hooks;
    hooks.reset = [this](uint64_t ack_every) { return reset(ack_every); };
    hooks.peak_rss = [this] { return peak_rss(); };
    return make_trial(
      *sys_, dest_, [payload] { return payload; }, c.pat, p, std::move(hooks),
      std::move(new_sink));
  }

  measurement handoff(const cell&, const run_params&) override {
    measurement m;
    m.error = "plain CAF has no hand-off (no store)";
    return m;
  }

private:
  bool reset(uint64_t ack_every) {
    if (peer_) {
      auto answer = peer_->ask("reset " + std::to_string(ack_every), "ok");
      return answer.has_value();
    }
    auto ok = reset_sink(*sys_, sink_, ack_every);
    reset_peak_rss();
    return ok;
  }

  double peak_rss() {
    if (!peer_)
      return peak_private_rss_mb();
    auto answer = peer_->ask("rss", "rss ");
    return answer ? std::stod(*answer) : -1;
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<child> peer_;
  caf::actor sink_;
  caf::actor dest_;
};

} // namespace

std::unique_ptr<group> make_caf_group(transport tr, bool tuned,
                                      const bench_env& env) {
  return std::make_unique<caf_group>(tr, tuned, env);
}

/// Runs the plain CAF side of a peer process until stdin closes.
int caf_peer_main(int argc, char** argv, bool tuned,
                  const std::string& address) {
  caf::actor_system_config cfg;
  register_caf_types(cfg);
  if (tuned)
    apply_ferry_caf_settings(cfg);
  if (auto err = cfg.parse(argc, argv)) {
    std::cerr << "ferry-bench peer: " << caf::to_string(err) << '\n';
    return 2;
  }
  caf::actor_system sys{cfg};
  auto sink = spawn_sink(sys);
  auto port = sys.middleman().publish(sink, 0, address.c_str());
  if (!port) {
    std::cerr << "ferry-bench peer: " << sys.render(port.error()) << '\n';
    return 1;
  }
  std::cout << "port " << *port << std::endl;
  auto rc = serve_peer(sys, sink);
  caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  return rc;
}

} // namespace ferry::bench
