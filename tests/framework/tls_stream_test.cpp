// TLS streams (framework/src/transport/tls_stream.hpp) over loopback TCP in
// one thread, driven with poll() (tls_pair.hpp): the handshake with the
// right CA and the peer's names; small and large pieces both ways, byte for
// byte; a write that fills the socket finished by passing the rest again;
// reads that leave bytes in OpenSSL the socket no longer signals; the end
// by close_notify and without it; each refusal with its reason from both
// sides; hostile bytes; no SIGPIPE; one thread reading while another
// writes.
#include <gtest/gtest.h>
#include <openssl/x509_vfy.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "tls_pair.hpp"
#include "transport/plain_stream.hpp"
#include "transport/tls_context.hpp"

namespace {

using namespace ferry::test::tls_pair;
using status = net::io_result::status;

/// A client and a server stream over one loopback connection.
struct stream_pair {
  std::unique_ptr<sockets> fds;
  std::unique_ptr<net::tls_stream> client;
  std::unique_ptr<net::tls_stream> server;
};

stream_pair make_streams(const std::string& client_name,
                         const std::string& server_name,
                         const std::string& client_ca = "ca.pem",
                         const std::string& server_ca = "ca.pem",
                         int buffer = 0) {
  stream_pair result;
  result.fds = connect_pair(buffer);
  auto client_ctx = context_of(client_name, client_ca);
  auto server_ctx = context_of(server_name, server_ca);
  if (!client_ctx || !server_ctx)
    return result;
  auto client = client_ctx->make_stream(result.fds->client, false);
  auto server = server_ctx->make_stream(result.fds->server, true);
  EXPECT_TRUE(client && server);
  if (client && server) {
    result.client = std::move(*client);
    result.server = std::move(*server);
  }
  return result;
}

stream_pair linked(const std::string& client_name = "alpha",
                   const std::string& server_name = "beta", int buffer = 0) {
  auto result
    = make_streams(client_name, server_name, "ca.pem", "ca.pem", buffer);
  if (!result.client)
    return result;
  auto done = handshake(*result.client, *result.server, *result.fds);
  EXPECT_TRUE(done.client.ok()) << done.client.error;
  EXPECT_TRUE(done.server.ok()) << done.server.error;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// -- handshake and data -------------------------------------------------------

TEST(tls_stream, TheRightCALinksAndEachSideNamesThePeer) {
  auto sut = make_streams("alpha", "beta");
  ASSERT_TRUE(sut.client);

  auto done = handshake(*sut.client, *sut.server, *sut.fds);

  ASSERT_TRUE(done.client.ok()) << done.client.error;
  ASSERT_TRUE(done.server.ok()) << done.server.error;
  EXPECT_EQ(sut.client->peer_names(), std::vector<std::string>{"beta"});
  EXPECT_EQ(sut.server->peer_names(), std::vector<std::string>{"alpha"});
  EXPECT_EQ(sut.client->verify_result(), X509_V_OK);
  EXPECT_EQ(sut.server->verify_result(), X509_V_OK);
  EXPECT_TRUE(contains(sut.client->cipher(), "TLSv1.3"))
    << sut.client->cipher();
  EXPECT_EQ(sut.server->check_name("alpha"), "");
  EXPECT_EQ(sut.server->check_name("gamma"),
            "name mismatch: the peer presents a certificate for 'alpha' but "
            "calls itself 'gamma'");
  EXPECT_EQ(sut.client->explain(), "");
  EXPECT_STREQ(sut.client->kind(), "TLS");
}

TEST(tls_stream, SmallAndLargePiecesCrossBothWaysByteForByte) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  auto up = pattern(6 << 20, 1);
  auto down = pattern(5 << 20, 2);
  end client{sut.client.get(), sut.fds->client,
             cut(up, {1, 100, 16383, 16384, 16385, 7, 300'000, 1 << 20, 40}),
             down.size()};
  end server{sut.server.get(), sut.fds->server,
             cut(down, {3, 65536, 5000, 2 << 20, 16384 * 3 + 1, 0, 11}),
             up.size()};
  server.buffer_size = 1 << 20;

  ASSERT_TRUE(exchange(client, server));

  EXPECT_TRUE(client.received == down);
  EXPECT_TRUE(server.received == up);
}

TEST(tls_stream, ManySmallPiecesShareRecords) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  auto up = pattern(200'000, 3);
  end client{sut.client.get(), sut.fds->client, cut(up, {1, 2, 3, 50, 500}), 0};
  end server{sut.server.get(), sut.fds->server, {}, up.size()};

  ASSERT_TRUE(exchange(client, server));

  EXPECT_TRUE(server.received == up);
}

TEST(tls_stream, AWriteThatFillsTheSocketIsFinishedByPassingTheRestAgain) {
  auto sut = linked("alpha", "beta", 16 * 1024);
  ASSERT_TRUE(sut.client);
  auto data = pattern(4 << 20, 4);
  net::piece whole{data};

  auto first = sut.client->write({&whole, 1});

  ASSERT_EQ(first.state, status::want_write) << first.error;
  ASSERT_LT(first.bytes, data.size());
  end client{
    sut.client.get(), sut.fds->client, {whole.subspan(first.bytes)}, 0};
  end server{sut.server.get(), sut.fds->server, {}, data.size()};
  ASSERT_TRUE(exchange(client, server));
  EXPECT_TRUE(server.received == data);
}

TEST(tls_stream, ARetryWithOtherBytesIsRefusedNamingTheContract) {
  auto sut = linked("alpha", "beta", 16 * 1024);
  ASSERT_TRUE(sut.client);
  auto data = pattern(4 << 20, 13);
  net::piece whole{data};
  auto first = sut.client->write({&whole, 1});
  ASSERT_EQ(first.state, status::want_write) << first.error;
  auto other = pattern(100, 14);
  net::piece small{other};

  auto retry = sut.client->write({&small, 1});

  EXPECT_EQ(retry.state, status::failed);
  EXPECT_TRUE(contains(retry.error, "TLS stream misused")) << retry.error;
  EXPECT_EQ(sut.client->write({&whole, 1}).state, status::failed);
}

TEST(tls_stream, SmallPiecesStagedWhenTheSocketFillsAreFinishedByAnEmptyWrite) {
  auto sut = linked("alpha", "beta", 16 * 1024);
  ASSERT_TRUE(sut.client);
  auto data = pattern(8 << 20, 5);
  auto pieces = cut(data, {100});
  size_t taken = 0;
  size_t next = 0;
  net::io_result last;

  // Ten pieces per call until the socket stops taking records.
  while (next < pieces.size()) {
    auto count = std::min<size_t>(10, pieces.size() - next);
    last = sut.client->write({pieces.data() + next, count});
    ASSERT_EQ(last.bytes % 100, 0u);
    taken += last.bytes;
    next += last.bytes / 100;
    if (!last.ok())
      break;
  }

  ASSERT_EQ(last.state, status::want_write) << last.error;
  ASSERT_LT(taken, data.size());
  // What the stream took arrives once it is written on (an empty write).
  end client{sut.client.get(), sut.fds->client, {}, 0};
  end server{sut.server.get(), sut.fds->server, {}, taken};
  ASSERT_TRUE(exchange(client, server));
  EXPECT_TRUE(
    std::equal(server.received.begin(), server.received.end(), data.begin()));
}

TEST(tls_stream, ASmallReadLeavesTheRestInOpenSSLForTheNextReadWithoutWaiting) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  // Three records: all of them fit in OpenSSL's read-ahead buffer.
  auto data = pattern(48 * 1024, 6);
  net::piece whole{data};
  ASSERT_TRUE(sut.client->write({&whole, 1}).ok());
  ASSERT_TRUE(wait_for(sut.fds->server, status::want_read));
  std::vector<std::byte> small(1000);

  auto first = sut.server->read(small);

  ASSERT_TRUE(first.ok()) << first.error;
  EXPECT_EQ(first.bytes, small.size());
  // OpenSSL read ahead: the socket is empty, OpenSSL holds the rest.
  EXPECT_FALSE(readable_now(sut.fds->server));
  std::vector<std::byte> all{small.begin(), small.end()};
  for (;;) {
    auto more = sut.server->read(small);
    if (!more.ok()) {
      EXPECT_EQ(more.state, status::want_read);
      break;
    }
    all.insert(all.end(), small.begin(),
               small.begin() + static_cast<ptrdiff_t>(more.bytes));
  }
  EXPECT_TRUE(all == data);
}

// -- the end ------------------------------------------------------------------

TEST(tls_stream, ACloseNotifyReadsAsClosedAfterTheBytesBeforeIt) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  auto data = pattern(50'000, 7);
  net::piece whole{data};
  ASSERT_TRUE(sut.client->write({&whole, 1}).ok());

  sut.client->shutdown();

  auto received = read_all(*sut.server, sut.fds->server, data.size() + 1);
  EXPECT_TRUE(received.bytes == data);
  EXPECT_EQ(received.last.state, status::closed);
  std::byte one[1];
  EXPECT_EQ(sut.server->read(one).state, status::closed);
}

TEST(tls_stream, AnEndWithoutCloseNotifyFailsSayingSo) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);

  ::shutdown(sut.fds->client, SHUT_WR);

  auto received = read_all(*sut.server, sut.fds->server, 1);
  EXPECT_EQ(received.last.state, status::failed);
  EXPECT_TRUE(contains(received.last.error,
                       "closed the TLS connection without a close_notify"))
    << received.last.error;
  EXPECT_EQ(sut.server->explain(), received.last.error);
}

TEST(tls_stream, WritingToAPeerThatHasGoneFailsWithoutSIGPIPE) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  ::close(sut.fds->server);
  sut.fds->server = -1;
  auto data = pattern(1 << 20, 8);
  net::piece whole{data};
  net::io_result last;

  // The first writes may land before the kernel knows; then EPIPE.
  for (int i = 0; i < 100 && last.state != status::failed; ++i) {
    last = sut.client->write({&whole, 1});
    if (last.state == status::want_write) {
      ASSERT_TRUE(wait_for(sut.fds->client, last.state));
    }
    whole = last.ok() ? net::piece{data} : whole.subspan(last.bytes);
  }

  EXPECT_EQ(last.state, status::failed);
  EXPECT_TRUE(contains(last.error, "the node at 127.0.0.1:")) << last.error;
}

// -- refusals -----------------------------------------------------------------

/// What each side of a refused link said.
struct refusal {
  std::string client;
  std::string server;
};

/// Links `client_name` (trusting `client_ca`) to `server_name` (trusting
/// `server_ca`) and returns why each side ended; a client that finished
/// its handshake reads until it learns the server's verdict.
refusal refuse(const std::string& client_name, const std::string& server_name,
               const std::string& client_ca = "ca.pem",
               const std::string& server_ca = "ca.pem") {
  auto sut = make_streams(client_name, server_name, client_ca, server_ca);
  if (!sut.client)
    return {};
  auto done = handshake(*sut.client, *sut.server, *sut.fds);
  if (done.client.ok())
    read_all(*sut.client, sut.fds->client, 1);
  EXPECT_EQ(sut.server->explain(), done.server.error);
  return {sut.client->explain(), sut.server->explain()};
}

TEST(tls_refusal, AServerRefusesAClientOfAnUnknownCA) {
  auto said = refuse("mallory", "alpha", "both.pem", "ca.pem");

  EXPECT_TRUE(contains(said.server, "refused the certificate of the peer at "
                                    "127.0.0.1:"))
    << said.server;
  EXPECT_TRUE(contains(said.server, ": unknown CA (")) << said.server;
  EXPECT_TRUE(contains(said.client, "the node at 127.0.0.1:")) << said.client;
  EXPECT_TRUE(contains(said.client, " refused this node's certificate (TLS "
                                    "alert: unknown CA)"))
    << said.client;
}

TEST(tls_refusal, AClientRefusesAServerOfAnUnknownCA) {
  auto said = refuse("alpha", "mallory", "ca.pem", "both.pem");

  EXPECT_TRUE(contains(said.client, "refused the certificate of the node at "
                                    "127.0.0.1:"))
    << said.client;
  EXPECT_TRUE(contains(said.client, "unknown CA")) << said.client;
  EXPECT_TRUE(contains(said.server, "refused this node's certificate (TLS "
                                    "alert: unknown CA)"))
    << said.server;
}

TEST(tls_refusal, AnExpiredCertificateIsRefusedByTheServer) {
  auto said = refuse("expired", "alpha");

  EXPECT_TRUE(contains(said.server, ": expired (certificate has expired)"))
    << said.server;
  EXPECT_TRUE(contains(said.client, "(TLS alert: certificate expired); this "
                                    "node's certificate is expired"))
    << said.client;
}

TEST(tls_refusal, AnExpiredCertificateIsRefusedByTheClient) {
  auto said = refuse("alpha", "expired");

  EXPECT_TRUE(contains(said.client, ": expired (")) << said.client;
  EXPECT_TRUE(contains(said.server, "certificate expired")) << said.server;
}

TEST(tls_refusal, ACertificateNotYetValidIsRefusedByTheServer) {
  auto said = refuse("future", "alpha");

  EXPECT_TRUE(contains(said.server, ": not yet valid (")) << said.server;
  EXPECT_TRUE(contains(said.client, "this node's certificate is not yet "
                                    "valid"))
    << said.client;
}

TEST(tls_refusal, ACertificateNotYetValidIsRefusedByTheClient) {
  auto said = refuse("alpha", "future");

  EXPECT_TRUE(contains(said.client, ": not yet valid (")) << said.client;
  EXPECT_TRUE(contains(said.server, "not yet valid")) << said.server;
}

TEST(tls_refusal, APlainPeerIsRefusedByATLSServer) {
  auto fds = connect_pair();
  auto server = context_of("alpha")->make_stream(fds->server, true);
  ASSERT_TRUE(server);
  ferry::detail::net::plain_stream client{fds->client};
  std::string hello = "a plain node's greeting, in its own protocol";
  net::piece whole{reinterpret_cast<const std::byte*>(hello.data()),
                   hello.size()};
  ASSERT_TRUE(client.write({&whole, 1}).ok());

  auto done = handshake(client, **server, *fds);

  EXPECT_EQ(done.server.state, status::failed);
  EXPECT_TRUE(contains(done.server.error, "the peer at 127.0.0.1:"))
    << done.server.error;
  EXPECT_TRUE(contains(done.server.error, " does not speak TLS (a plain "
                                          "ferry or CAF node"))
    << done.server.error;
}

TEST(tls_refusal, ATLSClientRefusesAPlainServer) {
  auto fds = connect_pair();
  auto client = context_of("alpha")->make_stream(fds->client, false);
  ASSERT_TRUE(client);
  ferry::detail::net::plain_stream server{fds->server};
  ASSERT_EQ((*client)->handshake().state, status::want_read);
  // The plain node reads the client's hello, answers in its own protocol
  // and closes.
  auto hello = read_all(server, fds->server, 100);
  ASSERT_EQ(hello.bytes.size(), 100u);
  std::string answer = "a plain node's answer, in its own protocol";
  net::piece whole{reinterpret_cast<const std::byte*>(answer.data()),
                   answer.size()};
  ASSERT_TRUE(server.write({&whole, 1}).ok());
  server.shutdown();

  auto done = handshake(**client, server, *fds);

  EXPECT_EQ(done.client.state, status::failed);
  EXPECT_TRUE(contains(done.client.error, "the node at 127.0.0.1:"))
    << done.client.error;
  EXPECT_TRUE(contains(done.client.error, " does not speak TLS (a plain "
                                          "node"))
    << done.client.error;
}

TEST(tls_refusal, APeerThatClosesAtOnceDoesNotSpeakTLS) {
  auto fds = connect_pair();
  auto server = context_of("alpha")->make_stream(fds->server, true);
  ASSERT_TRUE(server);

  ::shutdown(fds->client, SHUT_WR);
  auto received = read_all(**server, fds->server, 1);

  EXPECT_EQ(received.last.state, status::failed);
  EXPECT_TRUE(contains(received.last.error, "does not speak TLS"))
    << received.last.error;
}

TEST(tls_refusal, RandomBytesFailTheHandshakeWithoutHarm) {
  std::mt19937 gen{42};
  for (int round = 0; round < 20; ++round) {
    auto fds = connect_pair();
    auto server = context_of("alpha")->make_stream(fds->server, true);
    ASSERT_TRUE(server);
    std::vector<std::byte> noise(1 + gen() % 20000);
    for (auto& x : noise)
      x = static_cast<std::byte>(gen());
    // Some rounds start like a TLS handshake record.
    if (round % 2 == 1 && noise.size() > 3) {
      noise[0] = std::byte{0x16};
      noise[1] = std::byte{0x03};
      noise[2] = std::byte{0x01};
    }
    ASSERT_EQ(::send(fds->client, noise.data(), noise.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(noise.size()));
    ::shutdown(fds->client, SHUT_WR);

    auto received = read_all(**server, fds->server, 1);

    EXPECT_EQ(received.last.state, status::failed) << "round " << round;
    EXPECT_FALSE((*server)->explain().empty());
  }
}

// -- threads ------------------------------------------------------------------

TEST(tls_stream, OneThreadReadsWhileAnotherWritesOnEachSide) {
  auto sut = linked();
  ASSERT_TRUE(sut.client);
  auto up = pattern(3 << 20, 11);
  auto down = pattern(3 << 20, 12);
  // Only the calling thread writes `s`; it waits for writability alone.
  auto send_all = [](net::stream& s, int fd, const std::vector<std::byte>& x) {
    auto pieces = cut(x, {10, 20000, 70, 100000});
    size_t next = 0;
    size_t offset = 0;
    for (;;) {
      std::vector<net::piece> rest;
      if (next < pieces.size()) {
        rest.push_back(pieces[next].subspan(offset));
        rest.insert(rest.end(),
                    pieces.begin() + static_cast<ptrdiff_t>(next) + 1,
                    pieces.end());
      }
      auto result = s.write(rest);
      for (auto taken = result.bytes; taken > 0;) {
        auto left = pieces[next].size() - offset;
        if (taken < left) {
          offset += taken;
          break;
        }
        taken -= left;
        ++next;
        offset = 0;
      }
      if (result.ok() && next == pieces.size())
        return true;
      if (result.state == status::failed
          || (!result.ok() && !wait_for(fd, result.state)))
        return false;
    }
  };
  bool client_sent = false;
  bool server_sent = false;

  std::thread client_writer{[&] {
    client_sent = send_all(*sut.client, sut.fds->client, up);
  }};
  std::thread server_writer{[&] {
    server_sent = send_all(*sut.server, sut.fds->server, down);
  }};
  auto at_server = read_all(*sut.server, sut.fds->server, up.size());
  auto at_client = read_all(*sut.client, sut.fds->client, down.size());
  client_writer.join();
  server_writer.join();

  EXPECT_TRUE(client_sent);
  EXPECT_TRUE(server_sent);
  EXPECT_TRUE(at_server.bytes == up);
  EXPECT_TRUE(at_client.bytes == down);
}

} // namespace
