// Finding the types whose shape differs on a link (see type_check.hpp).
#include "link/type_check.hpp"

#include "ferry/errc.hpp"
#include "ferry/serializers/shape.hpp"
#include "ferry/serializers/writer_shapes.hpp"

#include <algorithm>
#include <sstream>

namespace ferry::detail {

namespace {

/// Why a type no family bridges is refused.
constexpr const char* unbridged =
  "no family bridges the two versions, so its messages are refused on this "
  "link in both directions, before any decoding";

} // namespace

type_check::type_check(const serializers::registry& reg, const hello& peer,
                       const std::string& peer_name,
                       const std::string& node_name) {
  auto here = "node " + node_name;
  auto there = "node " + peer_name;
  auto count = std::min(peer.type_names.size(), peer.type_shapes.size());
  auto shapes = std::make_shared<serializers::writer_shapes>();
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
    changed x{text.str(), {}};
    for (auto family : serializers::bridging_families)
      if (serializers::shapes_bridge(family, mine.shape, i->second))
        x.bridging.emplace_back(family);
    // cereal.binary and cereal.portable read the peer's bytes by its shape.
    if (x.bridges("cereal.binary"))
      shapes->add(mine.name, std::string{i->second});
    types_.emplace(mine.name, std::move(x));
  }
  if (!shapes->empty())
    writer_shapes_ = std::move(shapes);
}

bool type_check::changed::bridges(std::string_view family) const {
  return std::find(bridging.begin(), bridging.end(), family) != bridging.end();
}

std::vector<std::string>
type_check::changed::bridging_in(const std::vector<std::string>& prefs) const {
  std::vector<std::string> result;
  for (auto& family : prefs)
    if (bridges(family))
      result.push_back(family);
  return result;
}

bool type_check::differs(std::string_view name) const {
  return types_.find(name) != types_.end();
}

caf::error type_check::refuse(const std::string& name, const changed& x,
                              const std::string& why) const {
  return caf::make_error(
    errc::type_mismatch,
    x.text + "; " + why +
      ". Fix: build both nodes with the same definition "
      "of \"" +
      name +
      "\", or give both versions a ferry_version and change "
      "the type only as docs/evolution.md lists safe for a family both "
      "nodes use (msgpack, cereal.json, cereal.binary or cereal.portable)");
}

caf::expected<std::vector<std::string>>
type_check::send_families(std::string_view name,
                          const std::vector<std::string>& prefs) const {
  auto i = types_.find(name);
  if (i == types_.end())
    return prefs;
  auto& x = i->second;
  if (x.bridging.empty())
    return refuse(i->first, x, unbridged);
  auto result = x.bridging_in(prefs);
  if (result.empty())
    return refuse(i->first, x,
                  serializers::detail::list_names(x.bridging) +
                    " bridge the two versions, and the link sends with "
                    "none of them (its serializers, as the peer accepts "
                    "them, are " +
                    serializers::detail::list_names(prefs) + ")");
  return result;
}

caf::error type_check::refusal(std::string_view name,
                               std::string_view family) const {
  auto i = types_.find(name);
  if (i == types_.end() || i->second.bridges(family))
    return caf::none;
  auto& x = i->second;
  if (x.bridging.empty())
    return refuse(i->first, x, unbridged);
  return refuse(i->first, x,
                "it arrived in " + std::string{family} +
                  ", which does not bridge the two versions (" +
                  serializers::detail::list_names(x.bridging) +
                  " do), so it is refused before any decoding");
}

std::vector<std::string>
type_check::report(const std::vector<std::string>& prefs) const {
  std::vector<std::string> result;
  for (auto& [name, x] : types_) {
    auto sent = x.bridging_in(prefs);
    if (x.bridging.empty())
      result.push_back(x.text + "; refused on this link in both directions");
    else if (!sent.empty())
      result.push_back(
        x.text + "; sent in " + serializers::detail::list_names(sent) +
        " and received in " + serializers::detail::list_names(x.bridging) +
        " only, which bridge the two versions");
    else
      result.push_back(x.text + "; received in " +
                       serializers::detail::list_names(x.bridging) +
                       " only, which bridge the two versions, and not "
                       "sent: this link sends with none of them");
  }
  return result;
}

} // namespace ferry::detail
