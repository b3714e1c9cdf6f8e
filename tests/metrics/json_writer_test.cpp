// json_writer: commas, nesting, and strings escaped for JSON and for HTML.
#include "metrics/json_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using ferry::detail::json_writer;

TEST(json_writer, NestsObjectsAndArraysWithCommasBetweenElements) {
  json_writer out;
  out.begin_object()
    .field("a", uint64_t{1})
    .key("b")
    .begin_array()
    .value(true)
    .value(false)
    .null()
    .begin_object()
    .end_object()
    .end_array()
    .field("c", int64_t{-2})
    .end_object();
  EXPECT_EQ(out.take(), R"({"a":1,"b":[true,false,null,{}],"c":-2})");
}

TEST(json_writer, EscapesQuotesControlCharactersAndHtml) {
  json_writer out;
  // 25 bytes: the literal's closing NUL too.
  out.value(std::string_view{"\"\\\n\t\x01<script>&</script>\x7f", 25});
  EXPECT_EQ(out.take(), R"("\"\\\n\t\u0001\u003cscript\u003e\u0026)"
                        R"(\u003c/script\u003e\u007f\u0000")");
}

TEST(json_writer, WritesDoublesShortestAndNonFiniteAsNull) {
  json_writer out;
  out.begin_array()
    .value(0.5)
    .value(1e-7)
    .value(std::numeric_limits<double>::infinity())
    .value(std::nan(""))
    .end_array();
  EXPECT_EQ(out.take(), "[0.5,1e-07,null,null]");
}

TEST(json_writer, TakeLeavesAnEmptyWriter) {
  json_writer out;
  out.begin_array().value("x").end_array();
  EXPECT_EQ(out.take(), R"(["x"])");
  out.begin_array().value("y").end_array();
  EXPECT_EQ(out.take(), R"(["y"])");
}

} // namespace
