#include "controllers/hypernode/hypernode_controller.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "common/api/compact.h"
#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/informer/transforms.h"
#include "common/util/duration.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace basalt::controllers {
namespace {

constexpr char kLabelSource[] = "label";
constexpr char kProfileLabel[] = "volcano.sh/network-topology-profile";
constexpr char kDiscoveryKey[] = "discovery";

std::string Scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

absl::StatusOr<DiscoveryLevel> ParseLevel(const YAML::Node& n, const std::string& at, bool legacy) {
  if (!n.IsMap()) return absl::InvalidArgumentError(fmt::format("{}: must be a mapping", at));
  DiscoveryLevel level;
  level.node_label = Scalar(n, "nodeLabel");
  if (level.node_label.empty()) {
    return absl::InvalidArgumentError(fmt::format("{}.nodeLabel: required", at));
  }
  level.tier_name = legacy ? level.node_label : Scalar(n, "tierName");
  return level;
}

// Lower-case, [a-z0-9.-], starting and ending alphanumeric: a valid object name.
std::string ObjectName(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    out += std::isalnum(u) != 0 ? static_cast<char>(std::tolower(u)) : (c == '.' ? '.' : '-');
  }
  while (!out.empty() && std::isalnum(static_cast<unsigned char>(out.front())) == 0)
    out.erase(0, 1);
  while (!out.empty() && std::isalnum(static_cast<unsigned char>(out.back())) == 0) out.pop_back();
  if (out.size() > 253) out.resize(253);
  return out;
}

}  // namespace

absl::StatusOr<LabelDiscoveryConfig> ParseDiscoveryConfig(std::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("not YAML: {}", e.what()));
  }
  LabelDiscoveryConfig out;
  const YAML::Node sources = root.IsMap() ? root["networkTopologyDiscovery"] : YAML::Node();
  if (!sources) return out;
  if (!sources.IsSequence()) {
    return absl::InvalidArgumentError("networkTopologyDiscovery: must be a list");
  }
  try {
    for (size_t i = 0; i < sources.size(); ++i) {
      const YAML::Node s = sources[i];
      const std::string at = fmt::format("networkTopologyDiscovery[{}]", i);
      const bool enabled = s["enabled"] && s["enabled"].as<bool>();
      const std::string source = Scalar(s, "source");
      if (!enabled) continue;
      if (source != kLabelSource) {
        return absl::InvalidArgumentError(fmt::format(
            "{}.source: \"{}\" is not supported by Basalt (only \"label\"); set enabled: false", at,
            source));
      }
      out.enabled = true;
      if (std::string interval = Scalar(s, "interval"); !interval.empty()) {
        absl::StatusOr<std::chrono::nanoseconds> d = ParseGoDuration(interval);
        if (!d.ok() || d->count() <= 0) {
          return absl::InvalidArgumentError(
              fmt::format("{}.interval: \"{}\" is not a positive duration", at, interval));
        }
        out.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
      }
      const YAML::Node types = s["config"]["networkTopologyTypes"];
      if (!types || !types.IsMap()) {
        return absl::InvalidArgumentError(
            fmt::format("{}.config.networkTopologyTypes: required (a map of types)", at));
      }
      for (auto it = types.begin(); it != types.end(); ++it) {
        DiscoveryProfile p;
        p.name = it->first.as<std::string>();
        const std::string pat = fmt::format("{}.config.networkTopologyTypes.{}", at, p.name);
        const YAML::Node body = it->second;
        YAML::Node levels;
        const bool legacy = body.IsSequence();
        if (legacy) {
          levels = body;
        } else if (body.IsMap()) {
          levels = body["levels"];
          if (const YAML::Node ml = body["nodeSelector"]["matchLabels"]; ml && ml.IsMap()) {
            for (auto l = ml.begin(); l != ml.end(); ++l) {
              p.selector[l->first.as<std::string>()] = l->second.as<std::string>();
            }
          }
        }
        if (!levels || !levels.IsSequence() || levels.size() < 2) {
          return absl::InvalidArgumentError(
              fmt::format("{}{}: needs at least two levels (a topology label, then the node label)",
                          pat, legacy ? "" : ".levels"));
        }
        for (size_t l = 0; l < levels.size(); ++l) {
          BASALT_ASSIGN_OR_RETURN(
              DiscoveryLevel level,
              ParseLevel(levels[l], fmt::format("{}{}[{}]", pat, legacy ? "" : ".levels", l),
                         legacy));
          p.levels.push_back(std::move(level));
        }
        out.profiles.push_back(std::move(p));
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("networkTopologyDiscovery: {}", e.what()));
  }
  return out;
}

std::vector<DiscoveredHyperNode> DiscoverHyperNodes(const LabelDiscoveryConfig& config,
                                                    const std::vector<NodeLabels>& nodes,
                                                    std::vector<std::string>* conflicts) {
  std::map<std::string, DiscoveredHyperNode> out;
  std::set<std::string> taken_by_earlier_profiles;
  for (const DiscoveryProfile& p : config.profiles) {
    const size_t tiers = p.levels.size() - 1;  // the last level is the nodes
    // Per tier (index 0 = tier 1): HyperNode name -> members (children) and node count.
    std::vector<std::map<std::string, std::set<std::string>>> members(tiers);
    std::vector<std::map<std::string, int64_t>> counts(tiers);
    std::vector<std::map<std::string, std::string>> tier_names(tiers);
    for (const NodeLabels& n : nodes) {
      const bool selected = std::all_of(p.selector.begin(), p.selector.end(), [&](const auto& kv) {
        auto it = n.labels.find(kv.first);
        return it != n.labels.end() && it->second == kv.second;
      });
      if (!selected) continue;
      std::vector<std::string> names(tiers);
      bool complete = true;
      for (size_t t = 0; t < tiers && complete; ++t) {
        const DiscoveryLevel& level = p.levels[tiers - 1 - t];
        auto it = n.labels.find(level.node_label);
        names[t] = it == n.labels.end() ? std::string() : ObjectName(it->second);
        complete = !names[t].empty();
      }
      if (!complete) continue;
      for (size_t t = 0; t < tiers; ++t) {
        members[t][names[t]].insert(t == 0 ? n.name : names[t - 1]);
        ++counts[t][names[t]];
        tier_names[t][names[t]] = p.levels[tiers - 1 - t].tier_name;
      }
    }
    std::set<std::string> this_profile;
    for (size_t t = 0; t < tiers; ++t) {
      for (const auto& [name, children] : members[t]) {
        if (taken_by_earlier_profiles.count(name) != 0 || this_profile.count(name) != 0) {
          if (conflicts != nullptr) {
            conflicts->push_back(fmt::format(
                "HyperNode name {} (profile {}, tier {}) is already used by another domain", name,
                p.name, t + 1));
          }
          continue;
        }
        this_profile.insert(name);
        DiscoveredHyperNode d;
        d.name = name;
        d.profile = p.name;
        d.spec.tier = static_cast<int32_t>(t + 1);
        d.spec.tier_name = tier_names[t][name];
        for (const std::string& child : children) {
          api::HyperNodeMember m;
          m.type = t == 0 ? api::MemberType::kNode : api::MemberType::kHyperNode;
          m.exact_name = child;
          d.spec.members.push_back(std::move(m));
        }
        d.node_count = counts[t][name];
        out.emplace(name, std::move(d));
      }
    }
    taken_by_earlier_profiles.insert(this_profile.begin(), this_profile.end());
  }
  std::vector<DiscoveredHyperNode> sorted;
  for (auto& [name, d] : out) sorted.push_back(std::move(d));
  return sorted;
}

api::HyperNode DesiredDocument(const DiscoveredHyperNode& d) {
  api::HyperNode hn = api::HyperNode::Make(d.name);
  hn.SetLabel(api::kNetworkTopologySourceLabel, kLabelSource);
  hn.SetLabel(kProfileLabel, d.profile);
  hn.SetSpec(d.spec);
  return hn;
}

namespace {

class HyperNodeController final : public Controller {
 public:
  HyperNodeController(const ControllerContext& ctx, LabelDiscoveryConfig config)
      : ctx_(ctx), config_(std::move(config)) {
    nodes_ = ctx.informers->InformerFor(
        {.source = {.resource = client::Nodes()}, .transform = informer::CompactNodeTransform()});
    hypernodes_ = ctx.informers->InformerFor(client::HyperNodes());
    loop_ =
        std::make_unique<ReconcileLoop>(ReconcileLoopOptions{.name = "hypernode",
                                                             .clock = ctx.clock,
                                                             .metrics = ctx.metrics,
                                                             .queue_metrics = ctx.queue_metrics},
                                        [this](const std::string& key) { return Reconcile(key); });
    auto touch = [this](const informer::Object&) { loop_->Add(kDiscoveryKey); };
    auto node_changed = [this](const informer::Object& a, const informer::Object& b) {
      if (a.As<api::CompactNode>().labels != b.As<api::CompactNode>().labels) {
        loop_->Add(kDiscoveryKey);
      }
    };
    nodes_->AddEventHandler(informer::EventHandler{
        .on_add = touch,
        .on_update = node_changed,
        .on_delete = [touch](const informer::Object& o, bool) { touch(o); }});
    hypernodes_->AddEventHandler(informer::EventHandler{
        .on_add = touch,
        .on_update = [touch](const informer::Object&, const informer::Object& o) { touch(o); },
        .on_delete = [touch](const informer::Object& o, bool) { touch(o); }});
  }

  std::string_view Name() const override { return "hypernode"; }
  void Run(std::stop_token stop) override {
    if (config_.enabled) loop_->Add(kDiscoveryKey);
    loop_->Run(stop, 1);
  }
  bool HasSynced() const override { return nodes_->HasSynced() && hypernodes_->HasSynced(); }

 private:
  ReconcileResult Reconcile(const std::string&) {
    if (!config_.enabled) return std::optional<Clock::Duration>();
    std::vector<NodeLabels> nodes;
    for (const informer::Object& o : nodes_->store().List()) {
      const auto& n = o.As<api::CompactNode>();
      NodeLabels nl;
      nl.name = n.name;
      for (const auto& [k, v] : n.labels) nl.labels.emplace(k, v);
      nodes.push_back(std::move(nl));
    }
    std::vector<std::string> conflicts;
    const std::vector<DiscoveredHyperNode> desired = DiscoverHyperNodes(config_, nodes, &conflicts);
    for (const std::string& c : conflicts) Warn(c);

    std::map<std::string, informer::Object> existing;
    for (informer::Object& o : hypernodes_->store().List()) {
      existing.emplace(std::string(o.name()), std::move(o));
    }
    absl::Status first_error;
    auto note = [&first_error](absl::Status s) {
      if (!s.ok() && first_error.ok()) first_error = std::move(s);
    };
    std::set<std::string> wanted;
    for (const DiscoveredHyperNode& d : desired) {
      wanted.insert(d.name);
      auto it = existing.find(d.name);
      if (it == existing.end()) {
        absl::StatusOr<json::Document> created =
            ctx_.client->Create(client::HyperNodes(), "", DesiredDocument(d).ToJson());
        if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
          note(created.status());
          continue;
        }
        BASALT_LOG_INFO("Discovered HyperNode", "name", d.name, "tier", d.spec.tier, "nodes",
                        d.node_count);
        note(WriteNodeCount(d.name, d.node_count));
        continue;
      }
      absl::StatusOr<api::Object> copy = api::Object::CopyOf(it->second.doc());
      absl::StatusOr<api::HyperNode> current = copy.ok()
                                                   ? api::HyperNode::FromObject(*std::move(copy))
                                                   : absl::StatusOr<api::HyperNode>(copy.status());
      if (!current.ok()) {
        note(current.status());
        continue;
      }
      if (current->label(api::kNetworkTopologySourceLabel) != kLabelSource) {
        Warn(fmt::format("HyperNode {} exists and was not discovered from labels; left as is",
                         d.name));
        continue;
      }
      if (current->spec() != d.spec || current->label(kProfileLabel) != d.profile) {
        api::HyperNode next = *current;
        next.SetLabel(kProfileLabel, d.profile);
        next.SetSpec(d.spec);
        absl::StatusOr<json::Document> updated =
            ctx_.client->Update(client::HyperNodes(), next.ToJson());
        if (!updated.ok()) {
          note(updated.status());
          continue;
        }
        BASALT_LOG_INFO("Updated HyperNode", "name", d.name, "nodes", d.node_count);
      }
      if (current->node_count() != d.node_count) note(WriteNodeCount(d.name, d.node_count));
    }
    for (const auto& [name, o] : existing) {
      if (wanted.count(name) != 0) continue;
      const json::Value* labels = json::FindPath(o.doc(), {"metadata", "labels"});
      if (labels == nullptr ||
          json::GetString(*labels, api::kNetworkTopologySourceLabel) != kLabelSource) {
        continue;  // not ours: never deleted
      }
      client::DeleteOptions opts;
      opts.precondition_uid = std::string(json::GetString(*json::Find(o.doc(), "metadata"), "uid"));
      absl::Status s = ctx_.client->Delete(client::HyperNodes(), "", name, opts);
      if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) {
        note(s);
        continue;
      }
      BASALT_LOG_INFO("Deleted HyperNode no node label names any more", "name", name);
    }
    if (!first_error.ok()) return first_error;
    return std::optional<Clock::Duration>(
        std::chrono::duration_cast<Clock::Duration>(config_.interval));
  }

  absl::Status WriteNodeCount(const std::string& name, int64_t count) {
    absl::StatusOr<json::Document> r =
        ctx_.client->Patch(client::HyperNodes(), "", name, client::PatchType::kMerge,
                           fmt::format(R"({{"status":{{"nodeCount":{}}}}})", count), "status");
    return r.ok() || absl::IsNotFound(r.status()) ? absl::OkStatus() : r.status();
  }

  void Warn(const std::string& message) {
    std::lock_guard<std::mutex> l(mu_);
    if (!warned_.insert(message).second) return;
    BASALT_LOG_WARNING("HyperNode discovery", "problem", message);
  }

  const ControllerContext ctx_;
  const LabelDiscoveryConfig config_;
  informer::SharedInformer* nodes_;
  informer::SharedInformer* hypernodes_;
  std::unique_ptr<ReconcileLoop> loop_;
  std::mutex mu_;
  std::set<std::string> warned_;  // guarded by mu_
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewHyperNodeController(const ControllerContext& ctx) {
  LabelDiscoveryConfig config;
  if (!ctx.hypernode_discovery_config.empty()) {
    std::ifstream in(ctx.hypernode_discovery_config);
    if (!in) {
      return absl::InvalidArgumentError(fmt::format("--hypernode-discovery-config: cannot read {}",
                                                    ctx.hypernode_discovery_config));
    }
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<LabelDiscoveryConfig> parsed = ParseDiscoveryConfig(text.str());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(fmt::format("--hypernode-discovery-config {}: {}",
                                                    ctx.hypernode_discovery_config,
                                                    MessageOf(parsed.status())));
    }
    config = *std::move(parsed);
  }
  return std::unique_ptr<Controller>(new HyperNodeController(ctx, std::move(config)));
}

}  // namespace basalt::controllers
