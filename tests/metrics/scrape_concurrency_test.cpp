// Scrapes while messages flow: the endpoint's thread reads every counter
// and histogram the link threads write (run under TSan in CI).
#include "../framework/two_nodes.hpp"
#include "http_exchange.hpp"

#include "ferry/errc.hpp"
#include "ferry/node.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

/// Returns the body of GET /metrics from 127.0.0.1:`port`, or "".
std::string scrape(uint16_t port) {
  auto answer = ferry::test::exchange(port, "GET /metrics HTTP/1.0\r\n\r\n");
  auto body = answer.find("\r\n\r\n");
  return body == std::string::npos ? std::string{} : answer.substr(body + 4);
}

caf::behavior echo() {
  return {[](int32_t x) { return x; }};
}

class scrape_concurrency : public ferry::test::two_nodes {};

TEST_F(scrape_concurrency, ScrapesWhileSendersRaceThroughOneLink) {
  client_cfg.metrics_port = 0;
  server_cfg.metrics_port = 0;
  ASSERT_TRUE(start());
  auto proxy = ferry::test::connect(*server, *client,
                                    server->system().spawn(echo));
  ASSERT_TRUE(proxy) << ferry::render(proxy.error());
  constexpr int senders = 3;
  constexpr int per_sender = 300;
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::vector<std::string> scrapes;
  std::thread scraper{[&] {
    while (!done) {
      scrapes.push_back(scrape(client->metrics_port()));
      scrapes.push_back(scrape(server->metrics_port()));
    }
  }};
  std::vector<std::thread> threads;
  for (int t = 0; t < senders; ++t)
    threads.emplace_back([&] {
      caf::scoped_actor self{client->system()};
      for (int i = 0; i < per_sender; ++i)
        self->request(*proxy, 10s, int32_t{i})
          .receive([&](int32_t) { ++answered; }, [](caf::error&) {});
    });
  for (auto& t : threads)
    t.join();
  done = true;
  scraper.join();
  EXPECT_EQ(answered.load(), senders * per_sender);
  ASSERT_FALSE(scrapes.empty());
  for (auto& text : scrapes)
    EXPECT_NE(text.find("ferry_node_info"), std::string::npos);
  auto last = scrape(client->metrics_port());
  EXPECT_NE(last.find("family=\"") , std::string::npos);
  auto stats = client->stats("server");
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->batch_messages.sum,
            static_cast<double>(senders * per_sender));
}

} // namespace
