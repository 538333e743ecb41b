#include "common/api/topology.h"

#include "common/api/codec.h"
#include "common/api/vocabulary.h"
#include "common/util/status.h"

namespace basalt::api {

std::optional<NetworkTopology> DecodeNetworkTopology(FieldReader& r) {
  if (r.ObjectAt("networkTopology") == nullptr) return std::nullopt;
  FieldReader n = r.Child("networkTopology");
  NetworkTopology t;
  if (std::optional<std::string> mode = n.OptString("mode")) t.mode = *mode;
  t.highest_tier_allowed = n.OptInt32("highestTierAllowed");
  t.highest_tier_name = n.String("highestTierName");
  return t;
}

json::Value EncodeNetworkTopology(const NetworkTopology& t, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  WriteString(v, "mode", t.mode.empty() ? std::string_view("hard") : std::string_view(t.mode), a);
  if (t.highest_tier_allowed) {
    WriteInt(v, "highestTierAllowed", *t.highest_tier_allowed, a);
  } else if (!t.highest_tier_name.empty()) {
    WriteString(v, "highestTierName", t.highest_tier_name, a);
  }
  return v;
}

HyperNode HyperNode::Make(std::string_view name) {
  HyperNode h{Object()};
  h.SetApiVersionKind(kTopologyApiVersion, kHyperNodeKind);
  h.SetName(name);
  h.EnsurePath({"spec"});
  return h;
}

absl::StatusOr<HyperNode> HyperNode::Parse(std::string_view json_text) {
  BASALT_ASSIGN_OR_RETURN(Object obj, Object::Parse(json_text));
  return FromObject(std::move(obj));
}

absl::StatusOr<HyperNode> HyperNode::FromObject(Object obj) {
  HyperNode h(std::move(obj));
  BASALT_RETURN_IF_ERROR(h.CheckKind(kHyperNodeKind));
  absl::Status s = h.Decode();
  if (!s.ok()) return Annotate(s, h.Describe(kHyperNodeKind));
  return h;
}

absl::Status HyperNode::Decode() {
  FieldReader root(&doc(), "");
  FieldReader spec = root.Child("spec");
  spec_.tier = spec.Int32("tier");
  spec_.tier_name = spec.String("tierName");
  for (FieldReader& m : spec.Elements("members")) {
    HyperNodeMember member;
    const std::string type = m.String("type");
    if (type == "HyperNode") {
      member.type = MemberType::kHyperNode;
    } else if (type == "Node") {
      member.type = MemberType::kNode;
    } else {
      m.Fail("type", "must be Node or HyperNode");
    }
    FieldReader sel = m.Child("selector");
    member.exact_name = sel.Child("exactMatch").String("name");
    member.regex_pattern = sel.Child("regexMatch").String("pattern");
    if (sel.ObjectAt("labelMatch") != nullptr) {
      member.label_match = true;
      member.match_labels = sel.Child("labelMatch").StringMapAt("matchLabels");
    }
    spec_.members.push_back(std::move(member));
  }
  node_count_ = root.Child("status").Int("nodeCount");
  return root.status();
}

void HyperNode::SetSpec(const HyperNodeSpec& sp) {
  json::Allocator& a = allocator();
  json::Value& s = EnsurePath({"spec"});
  WriteInt(s, "tier", sp.tier, a);
  WriteOptString(s, "tierName", sp.tier_name, a);
  json::Value members(rapidjson::kArrayType);
  for (const HyperNodeMember& m : sp.members) {
    json::Value member(rapidjson::kObjectType);
    json::Set(member, "type",
              json::MakeString(m.type == MemberType::kHyperNode ? "HyperNode" : "Node", a), a);
    json::Value selector(rapidjson::kObjectType);
    if (!m.exact_name.empty()) {
      json::Value exact(rapidjson::kObjectType);
      json::Set(exact, "name", json::MakeString(m.exact_name, a), a);
      json::Set(selector, "exactMatch", std::move(exact), a);
    } else if (!m.regex_pattern.empty()) {
      json::Value regex(rapidjson::kObjectType);
      json::Set(regex, "pattern", json::MakeString(m.regex_pattern, a), a);
      json::Set(selector, "regexMatch", std::move(regex), a);
    } else if (m.label_match) {
      json::Value labels(rapidjson::kObjectType);
      WriteStringMap(labels, "matchLabels", m.match_labels, a);
      json::Set(selector, "labelMatch", std::move(labels), a);
    }
    json::Set(member, "selector", std::move(selector), a);
    members.PushBack(std::move(member), a);
  }
  json::Set(s, "members", std::move(members), a);
  spec_ = sp;
}

}  // namespace basalt::api
