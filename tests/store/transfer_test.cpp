// Unit tests of handle transfer: tickets, the in-band scope, out-of-band
// serialization (pin with one warning, or strict error), over every
// serialization family (cereal binary, portable binary, JSON, CAF binary).
#include "ferry/store/in_band_scope.hpp"
#include "ferry/store/log.hpp"
#include "ferry/store/object_ref.hpp"
#include "ferry/store/shared_array.hpp"

#include "store_test_support.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>

#include <gtest/gtest.h>

#include <mutex>
#include <sstream>

using namespace ferry::store;
using namespace ferry::store::test;

namespace {

// -- one adapter per serialization family -------------------------------------

template <class Out, class In>
struct cereal_family {
  template <class T>
  static std::string save(const T& x) {
    std::ostringstream buf;
    {
      Out ar{buf};
      ar(x);
    }
    return buf.str();
  }

  template <class T>
  static void load(const std::string& bytes, T& x) {
    std::istringstream buf{bytes};
    In ar{buf};
    ar(x);
  }
};

using cereal_binary
  = cereal_family<cereal::BinaryOutputArchive, cereal::BinaryInputArchive>;
using cereal_portable = cereal_family<cereal::PortableBinaryOutputArchive,
                                      cereal::PortableBinaryInputArchive>;
using cereal_json
  = cereal_family<cereal::JSONOutputArchive, cereal::JSONInputArchive>;

/// CAF's binary format; errors from `inspect` become exceptions here so that
/// one test body serves every family.
struct caf_binary {
  template <class T>
  static std::string save(const T& x) {
    std::vector<char> buf;
    caf::binary_serializer sink{nullptr, buf};
    if (auto err = sink(const_cast<T&>(x)))
      throw ref_serialization_error{std::move(err)};
    return {buf.begin(), buf.end()};
  }

  template <class T>
  static void load(const std::string& bytes, T& x) {
    caf::binary_deserializer source{nullptr, bytes.data(), bytes.size()};
    if (auto err = source(x))
      throw ref_serialization_error{std::move(err)};
  }
};

/// Captures the store's warnings for the lifetime of the object.
struct warning_capture {
  warning_capture() {
    previous = set_log_hook([this](std::string_view line) {
      std::lock_guard guard{mtx};
      lines.emplace_back(line);
    });
  }
  ~warning_capture() {
    set_log_hook(std::move(previous));
  }
  std::vector<std::string> taken() {
    std::lock_guard guard{mtx};
    return lines;
  }
  std::mutex mtx;
  std::vector<std::string> lines;
  log_hook previous;
};

template <class Family>
class ref_serialization_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("ser");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    store = std::move(*attached);
    auto ref = store.put(pattern(4000, 9));
    ASSERT_TRUE(ref);
    sut = std::move(*ref);
  }

  store_cleanup cleanup;
  object_store store;
  object_ref sut;
};

using families
  = ::testing::Types<cereal_binary, cereal_portable, cereal_json, caf_binary>;
TYPED_TEST_SUITE(ref_serialization_test, families);

TYPED_TEST(ref_serialization_test, InBandSerializationExportsOneTicket) {
  std::string bytes;
  std::vector<transfer_ticket> tickets;
  {
    in_band_scope scope{this->store};
    bytes = TypeParam::save(this->sut);
    tickets = scope.take_tickets();
  }
  ASSERT_EQ(tickets.size(), 1u);
  EXPECT_EQ(tickets[0].object, this->sut.id());
  EXPECT_EQ(this->sut.ref_count(), 2u); // handle + in transit
  auto summary = this->store.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->objects[0].holders[0].in_transit, 1u);
  EXPECT_FALSE(summary->objects[0].pinned);
  // The receiver's deserialization redeems the ticket: no extra count.
  object_ref received;
  TypeParam::load(bytes, received);
  EXPECT_EQ(received.id(), this->sut.id());
  EXPECT_EQ(received.bytes().data(), this->sut.bytes().data());
  EXPECT_EQ(this->sut.ref_count(), 2u);
  // The ticket is used up.
  auto again = this->store.cancel(tickets[0]);
  ASSERT_TRUE(again);
  EXPECT_EQ(code_of(again), errc::ticket_not_found);
}

TYPED_TEST(ref_serialization_test, TicketNotRedeemedCanBeCancelled) {
  std::vector<transfer_ticket> tickets;
  {
    in_band_scope scope{this->store};
    auto bytes = TypeParam::save(this->sut);
    tickets = scope.take_tickets();
  }
  ASSERT_EQ(tickets.size(), 1u);
  EXPECT_FALSE(this->store.cancel(tickets[0]));
  EXPECT_EQ(this->sut.ref_count(), 1u);
}

TYPED_TEST(ref_serialization_test, OutOfBandSerializationPinsAndWarnsOnce) {
  warning_capture warnings;
  auto id = this->sut.id();
  auto first = TypeParam::save(this->sut);
  auto second = TypeParam::save(this->sut);
  auto lines = warnings.taken();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("object " + to_string(id)), std::string::npos)
    << lines[0];
  EXPECT_NE(lines[0].find(this->cleanup.cfg.name), std::string::npos);
  EXPECT_EQ(this->sut.ref_count(), 2u); // handle + pin
  // The pin keeps the object after its last handle dropped...
  this->sut.reset();
  object_ref loaded;
  TypeParam::load(first, loaded);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded.id(), id);
  EXPECT_EQ(checksum(loaded.bytes()), checksum(pattern(4000, 9)));
  loaded.reset();
  auto summary = this->store.memory_summary();
  ASSERT_TRUE(summary);
  ASSERT_EQ(summary->objects.size(), 1u);
  EXPECT_TRUE(summary->objects[0].pinned);
  // ...until it is unpinned explicitly.
  EXPECT_FALSE(this->store.unpin(id));
  auto gone = this->store.get(id);
  ASSERT_FALSE(gone);
  EXPECT_EQ(code_of(gone.error()), errc::object_not_found);
}

TYPED_TEST(ref_serialization_test, EmptyHandleRoundTripsAsEmpty) {
  object_ref empty;
  auto bytes = TypeParam::save(empty);
  object_ref loaded = this->sut;
  TypeParam::load(bytes, loaded);
  EXPECT_FALSE(loaded);
  EXPECT_EQ(this->sut.ref_count(), 1u);
}

TYPED_TEST(ref_serialization_test, SharedArraySerializesAsItsHandle) {
  std::vector<int32_t> values{1, 2, 3, 4, 5};
  auto arr = make_shared_array(this->store, values);
  ASSERT_TRUE(arr);
  std::string bytes;
  {
    in_band_scope scope{this->store};
    bytes = TypeParam::save(*arr);
    EXPECT_EQ(scope.take_tickets().size(), 1u);
  }
  shared_array<int32_t> loaded;
  TypeParam::load(bytes, loaded);
  EXPECT_EQ(loaded.to_vector(), values);
  EXPECT_EQ(loaded.data(), arr->data());
}

template <class Family>
class strict_serialization_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("strict");
    cleanup.cfg.allow_out_of_band_ref_serialization = false;
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    store = std::move(*attached);
    auto ref = store.put(pattern(100, 1));
    ASSERT_TRUE(ref);
    sut = std::move(*ref);
  }

  store_cleanup cleanup;
  object_store store;
  object_ref sut;
};

TYPED_TEST_SUITE(strict_serialization_test, families);

TYPED_TEST(strict_serialization_test, OutOfBandSerializationFails) {
  warning_capture warnings;
  try {
    auto bytes = TypeParam::save(this->sut);
    FAIL() << "serializing out of band must fail in strict mode";
  } catch (const ref_serialization_error& ex) {
    EXPECT_EQ(code_of(ex.error()), errc::out_of_band_ref);
    std::string what = ex.what();
    EXPECT_NE(what.find("object " + to_string(this->sut.id())),
              std::string::npos)
      << what;
    EXPECT_NE(what.find("out-of-band"), std::string::npos) << what;
    EXPECT_NE(what.find("Fix:"), std::string::npos) << what;
  }
  EXPECT_EQ(this->sut.ref_count(), 1u); // not pinned
  EXPECT_TRUE(warnings.taken().empty());
}

TYPED_TEST(strict_serialization_test, InBandSerializationStillWorks) {
  in_band_scope scope{this->store};
  auto bytes = TypeParam::save(this->sut);
  EXPECT_EQ(scope.tickets().size(), 1u);
  object_ref loaded;
  TypeParam::load(bytes, loaded);
  EXPECT_EQ(loaded.id(), this->sut.id());
}

// -- tickets without serialization ------------------------------------------

class ticket_test : public ::testing::Test {
protected:
  void SetUp() override {
    cleanup.cfg = small_config("ticket");
    auto attached = object_store::attach(cleanup.cfg);
    ASSERT_TRUE(attached) << render(attached.error());
    store = std::move(*attached);
    auto ref = store.put(pattern(100, 1));
    ASSERT_TRUE(ref);
    sut = std::move(*ref);
  }

  store_cleanup cleanup;
  object_store store;
  object_ref sut;
};

TEST_F(ticket_test, ExportAddsAnInTransitReference) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket) << render(ticket.error());
  EXPECT_EQ(ticket->object, sut.id());
  EXPECT_NE(ticket->id, 0u);
  EXPECT_EQ(sut.ref_count(), 2u);
}

TEST_F(ticket_test, TicketKeepsTheObjectAfterTheLastHandleDrops) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket);
  auto id = sut.id();
  sut.reset();
  auto redeemed = store.redeem(*ticket);
  ASSERT_TRUE(redeemed) << render(redeemed.error());
  EXPECT_EQ(redeemed->id(), id);
  EXPECT_EQ(redeemed->ref_count(), 1u);
  EXPECT_EQ(checksum(redeemed->bytes()), checksum(pattern(100, 1)));
}

TEST_F(ticket_test, RedeemTwiceFailsWithTicketNotFound) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket);
  auto first = store.redeem(*ticket);
  ASSERT_TRUE(first);
  auto second = store.redeem(*ticket);
  ASSERT_FALSE(second);
  EXPECT_EQ(code_of(second.error()), errc::ticket_not_found);
  EXPECT_EQ(sut.ref_count(), 2u);
}

TEST_F(ticket_test, CancellingTheLastReferenceFreesTheObject) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket);
  auto id = sut.id();
  sut.reset();
  EXPECT_FALSE(store.cancel(*ticket));
  EXPECT_FALSE(store.get(id));
  auto summary = store.memory_summary();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->bytes_used, 0u);
}

TEST_F(ticket_test, ForgedTicketsAreRejected) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket);
  for (auto forged : {transfer_ticket{sut.id(), 0},
                      transfer_ticket{sut.id(), ticket->id + 1},
                      transfer_ticket{object_id{12345}, ticket->id},
                      transfer_ticket{sut.id(), ~uint64_t{0}}}) {
    auto result = store.redeem(forged);
    ASSERT_FALSE(result);
    EXPECT_EQ(code_of(result.error()), errc::ticket_not_found);
    EXPECT_EQ(code_of(store.cancel(forged)), errc::ticket_not_found);
  }
  EXPECT_EQ(sut.ref_count(), 2u);
}

TEST_F(ticket_test, TicketTableExhaustionFailsWithTableFull) {
  std::vector<transfer_ticket> tickets;
  for (uint32_t i = 0; i < cleanup.cfg.max_tickets; ++i) {
    auto ticket = sut.export_in_band();
    ASSERT_TRUE(ticket);
    tickets.push_back(*ticket);
  }
  auto one_more = sut.export_in_band();
  ASSERT_FALSE(one_more);
  EXPECT_EQ(code_of(one_more.error()), errc::table_full);
  for (auto& ticket : tickets)
    EXPECT_FALSE(store.cancel(ticket));
  EXPECT_EQ(sut.ref_count(), 1u);
}

TEST_F(ticket_test, UnpinWithoutPinFailsWithNotPinned) {
  auto err = sut.unpin();
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), errc::not_pinned);
}

TEST_F(ticket_test, WireOfAStoreNotAttachedFailsWithStoreNotAttached) {
  ref_wire wire{store.token() + 1, static_cast<uint64_t>(sut.id()), 0};
  auto result = from_wire(wire);
  ASSERT_FALSE(result);
  EXPECT_EQ(code_of(result.error()), errc::store_not_attached);
}

TEST_F(ticket_test, NestedScopesCollectSeparately) {
  in_band_scope outer{store};
  auto a = to_wire(sut);
  ASSERT_TRUE(a);
  {
    in_band_scope inner{store};
    EXPECT_EQ(in_band_scope::current(), &inner);
    auto b = to_wire(sut);
    ASSERT_TRUE(b);
    EXPECT_EQ(inner.tickets().size(), 1u);
  }
  EXPECT_EQ(in_band_scope::current(), &outer);
  EXPECT_EQ(outer.tickets().size(), 1u);
  EXPECT_EQ(sut.ref_count(), 3u);
}

TEST_F(ticket_test, ScopeOfAnotherStoreDoesNotMakeTransferInBand) {
  store_cleanup other_cleanup{small_config("other")};
  auto other = object_store::attach(other_cleanup.cfg);
  ASSERT_TRUE(other);
  warning_capture warnings;
  in_band_scope scope{*other};
  auto wire = to_wire(sut);
  ASSERT_TRUE(wire);
  EXPECT_EQ(wire->ticket, 0u);
  EXPECT_TRUE(scope.tickets().empty());
  EXPECT_EQ(warnings.taken().size(), 1u);
  EXPECT_FALSE(sut.unpin());
}

TEST_F(ticket_test, TicketsAndWiresRoundTripThroughCaf) {
  auto ticket = sut.export_in_band();
  ASSERT_TRUE(ticket);
  auto bytes = caf_binary::save(*ticket);
  transfer_ticket loaded;
  caf_binary::load(bytes, loaded);
  EXPECT_EQ(loaded, *ticket);
  EXPECT_NE(caf::deep_to_string(loaded).find(std::to_string(ticket->id)),
            std::string::npos);
  ref_wire wire{1, 2, 3};
  ref_wire wire_loaded;
  caf_binary::load(caf_binary::save(wire), wire_loaded);
  EXPECT_EQ(wire_loaded.store, 1u);
  EXPECT_EQ(wire_loaded.object, 2u);
  EXPECT_EQ(wire_loaded.ticket, 3u);
  EXPECT_FALSE(store.cancel(loaded));
}

TEST_F(ticket_test, RenderingWithCafHasNoSideEffects) {
  auto text = caf::deep_to_string(sut);
  EXPECT_NE(text.find(to_string(sut.id())), std::string::npos) << text;
  EXPECT_EQ(sut.ref_count(), 1u);
}

} // namespace
