// Finding the types whose shape differs on a link (see type_check.hpp).
#include "link/type_check.hpp"

#include "ferry/errc.hpp"
#include "ferry/serializers/shape.hpp"

#include <algorithm>
#include <sstream>

namespace ferry::detail {

namespace {

/// Why a type no family bridges is refused.
constexpr const char* unbridged
  = "no family bridges the two versions, so its messages are refused on this "
    "link in both directions, before any decoding";

bool by_name(std::string_view family) {
  auto& xs = serializers::by_name_families;
  return std::find(xs.begin(), xs.end(), family) != xs.end();
}

} // namespace

type_check::type_check(const serializers::registry& reg, const hello& peer,
                       const std::string& node_name) {
  auto here = "node " + node_name;
  auto there = "node " + peer.node_name;
  auto count = std::min(peer.type_names.size(), peer.type_shapes.size());
  std::map<std::string_view, std::string_view> theirs;
  for (size_t i = 0; i < count; ++i)
    theirs.emplace(peer.type_names[i], peer.type_shapes[i]);
  for (auto& mine : reg.type_shapes()) {
    auto i = theirs.find(mine.name);
    if (i == theirs.end())
      continue;
    auto diff = serializers::shape_difference(mine.name, mine.shape, i->second,
                                              here, there);
    if (!diff)
      continue;
    std::ostringstream text;
    text << "type \"" << mine.name << "\" has another shape on " << here
         << " (fingerprint " << serializers::shape_fingerprint_text(mine.shape)
         << ") than on " << there << " (fingerprint "
         << serializers::shape_fingerprint_text(i->second) << "): " << *diff;
    types_.emplace(mine.name,
                   changed{text.str(), serializers::shapes_bridge_by_name(
                                         mine.shape, i->second)});
  }
}

bool type_check::differs(std::string_view name) const {
  return types_.find(name) != types_.end();
}

caf::error type_check::refuse(const std::string& name, const changed& x,
                              const std::string& why) const {
  return caf::make_error(
    errc::type_mismatch,
    x.text + "; " + why + ". Fix: build both nodes with the same definition "
      "of \"" + name + "\", or give both versions a ferry_version and send "
      "them with msgpack or cereal.json, which carry members by name "
      "(docs/evolution.md)");
}

caf::expected<std::vector<std::string>>
type_check::send_families(std::string_view name,
                          const std::vector<std::string>& prefs) const {
  auto i = types_.find(name);
  if (i == types_.end())
    return prefs;
  if (!i->second.bridged)
    return refuse(i->first, i->second, unbridged);
  std::vector<std::string> result;
  for (auto& family : prefs)
    if (by_name(family))
      result.push_back(family);
  if (result.empty())
    return refuse(i->first, i->second,
                  "msgpack and cereal.json bridge the two versions, and the "
                  "link sends with neither (its serializers, as the peer "
                  "accepts them, are "
                    + serializers::detail::list_names(prefs) + ")");
  return result;
}

caf::error type_check::refusal(std::string_view name,
                               std::string_view family) const {
  auto i = types_.find(name);
  if (i == types_.end() || (i->second.bridged && by_name(family)))
    return caf::none;
  if (i->second.bridged)
    return refuse(i->first, i->second,
                  "it arrived in " + std::string{family}
                    + ", which does not bridge the two versions (msgpack and "
                      "cereal.json do), so it is refused before any decoding");
  return refuse(i->first, i->second, unbridged);
}

std::vector<std::string>
type_check::report(const std::vector<std::string>& prefs) const {
  std::vector<std::string> result;
  bool sends_by_name = std::any_of(prefs.begin(), prefs.end(),
                                   [](auto& family) { return by_name(family); });
  for (auto& [name, x] : types_) {
    if (!x.bridged)
      result.push_back(x.text + "; refused on this link in both directions");
    else if (sends_by_name)
      result.push_back(x.text
                       + "; sent and received by member name, in msgpack or "
                         "cereal.json only");
    else
      result.push_back(x.text
                       + "; received by member name from msgpack or "
                         "cereal.json only, and not sent: this link sends "
                         "with neither");
  }
  return result;
}

} // namespace ferry::detail
