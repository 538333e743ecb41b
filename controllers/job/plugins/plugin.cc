#include "controllers/job/plugins/plugin.h"

#include <charconv>

#include "common/api/codec.h"
#include "common/api/vocabulary.h"
#include "controllers/job/plugins/objects.h"
#include "controllers/job/pods/pods.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

json::Value& EnsureArray(json::Value& obj, std::string_view key, json::Allocator& alloc) {
  json::Value* v = json::FindMutable(obj, key);
  if (v == nullptr) {
    json::Set(obj, key, json::Value(rapidjson::kArrayType), alloc);
    v = json::FindMutable(obj, key);
  } else if (!v->IsArray()) {
    v->SetArray();
  }
  return *v;
}

bool HasNamed(const json::Value& obj, std::string_view array, std::string_view field,
              std::string_view value) {
  const json::Value* list = json::Find(obj, array);
  if (list == nullptr || !list->IsArray()) return false;
  for (const auto& e : list->GetArray()) {
    if (json::GetString(e, field) == value) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<json::Document>> JobPlugin::OnJobUpdate(const api::Job&) {
  return std::vector<json::Document>();
}

std::string ControlledResourceKey(std::string_view plugin) {
  return fmt::format("plugin-{}", plugin);
}

bool NeedsOnJobAdd(const api::Job& job, std::string_view plugin) {
  return job.status().controlled_resources.count(ControlledResourceKey(plugin)) == 0;
}

void FlagSet::String(std::string name, std::string* target) {
  flags_.push_back({std::move(name), Kind::kString, target});
}
void FlagSet::Int(std::string name, int64_t* target) {
  flags_.push_back({std::move(name), Kind::kInt, target});
}
void FlagSet::Bool(std::string name, bool* target) {
  flags_.push_back({std::move(name), Kind::kBool, target});
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args) {
  auto error = [&](std::string msg) {
    return absl::InvalidArgumentError(fmt::format("plugin {}: {}", plugin_, msg));
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') break;  // first non-flag ends parsing
    if (arg == "--") break;
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=') {
      return error(fmt::format("bad flag syntax: {}", arg));
    }
    std::string_view name = body;
    std::optional<std::string_view> value;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    const Flag* flag = nullptr;
    for (const auto& f : flags_) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) return error(fmt::format("flag provided but not defined: -{}", name));
    if (flag->kind == Kind::kBool) {
      bool b = true;
      if (value) {
        if (*value == "true" || *value == "1" || *value == "t" || *value == "T" ||
            *value == "TRUE" || *value == "True") {
          b = true;
        } else if (*value == "false" || *value == "0" || *value == "f" || *value == "F" ||
                   *value == "FALSE" || *value == "False") {
          b = false;
        } else {
          return error(fmt::format("invalid boolean value \"{}\" for -{}", *value, name));
        }
      }
      *static_cast<bool*>(flag->target) = b;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) return error(fmt::format("flag needs an argument: -{}", name));
      value = args[++i];
    }
    if (flag->kind == Kind::kString) {
      *static_cast<std::string*>(flag->target) = std::string(*value);
    } else {
      int64_t n = 0;
      auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
      if (ec != std::errc() || ptr != value->data() + value->size()) {
        return error(fmt::format("invalid value \"{}\" for flag -{}", *value, name));
      }
      *static_cast<int64_t*>(flag->target) = n;
    }
  }
  return absl::OkStatus();
}

void ForEachContainer(json::Document& pod, bool init, const std::function<void(json::Value&)>& fn) {
  json::Value* spec = json::FindMutable(pod, "spec");
  if (spec == nullptr) return;
  for (std::string_view key :
       {std::string_view("containers"), std::string_view("initContainers")}) {
    if (key == "initContainers" && !init) break;
    json::Value* list = json::FindMutable(*spec, key);
    if (list == nullptr || !list->IsArray()) continue;
    for (auto& c : list->GetArray()) {
      if (c.IsObject()) fn(c);
    }
  }
}

void AddEnv(json::Value& container, std::string_view name, std::string_view value,
            json::Allocator& alloc) {
  if (HasNamed(container, "env", "name", name)) return;
  json::Value env(rapidjson::kObjectType);
  json::Set(env, "name", json::MakeString(name, alloc), alloc);
  json::Set(env, "value", json::MakeString(value, alloc), alloc);
  EnsureArray(container, "env", alloc).PushBack(std::move(env), alloc);
}

void AddEnvFromConfigMap(json::Value& container, std::string_view name, std::string_view config_map,
                         std::string_view key, json::Allocator& alloc) {
  if (HasNamed(container, "env", "name", name)) return;
  json::Value ref(rapidjson::kObjectType);
  json::Set(ref, "name", json::MakeString(config_map, alloc), alloc);
  json::Set(ref, "key", json::MakeString(key, alloc), alloc);
  json::Value from(rapidjson::kObjectType);
  json::Set(from, "configMapKeyRef", std::move(ref), alloc);
  json::Value env(rapidjson::kObjectType);
  json::Set(env, "name", json::MakeString(name, alloc), alloc);
  json::Set(env, "valueFrom", std::move(from), alloc);
  EnsureArray(container, "env", alloc).PushBack(std::move(env), alloc);
}

void AddVolume(json::Document& pod, json::Value volume) {
  auto& a = pod.GetAllocator();
  json::Value& spec = json::EnsureObject(pod, "spec", a);
  if (HasNamed(spec, "volumes", "name", json::GetString(volume, "name"))) return;
  EnsureArray(spec, "volumes", a).PushBack(std::move(volume), a);
}

void AddVolumeMount(json::Value& container, json::Value mount, json::Allocator& alloc) {
  if (HasNamed(container, "volumeMounts", "mountPath", json::GetString(mount, "mountPath"))) {
    return;
  }
  EnsureArray(container, "volumeMounts", alloc).PushBack(std::move(mount), alloc);
}

void AddContainerPort(json::Value& container, std::string_view name, int64_t port,
                      json::Allocator& alloc) {
  if (const json::Value* ports = json::Find(container, "ports"); ports && ports->IsArray()) {
    for (const auto& p : ports->GetArray()) {
      if (json::GetString(p, "name") == name || json::GetInt(p, "containerPort", -1) == port) {
        return;
      }
    }
  }
  json::Value p(rapidjson::kObjectType);
  json::Set(p, "name", json::MakeString(name, alloc), alloc);
  json::Set(p, "containerPort", json::Value(port), alloc);
  json::Set(p, "protocol", json::MakeString("TCP", alloc), alloc);
  EnsureArray(container, "ports", alloc).PushBack(std::move(p), alloc);
}

std::string_view PodSpecString(const json::Document& pod, std::string_view key) {
  const json::Value* spec = json::Find(pod, "spec");
  return spec == nullptr ? std::string_view() : json::GetString(*spec, key);
}

std::vector<std::string> TaskHosts(const api::Job& job, const api::TaskSpec& task) {
  std::vector<std::string> hosts;
  const std::string_view hostname = task.TemplateSpecString("hostname");
  std::string_view subdomain = task.TemplateSpecString("subdomain");
  if (subdomain.empty()) subdomain = job.name();
  for (int32_t i = 0; i < task.replicas; ++i) {
    if (!hostname.empty()) {
      hosts.push_back(fmt::format("{}.{}", hostname, subdomain));
      break;
    }
    hosts.push_back(fmt::format("{}.{}", MakePodName(job.name(), task.name, i), subdomain));
  }
  return hosts;
}

json::Document NewOwnedObject(const api::Job& job, std::string_view api_version,
                              std::string_view kind, std::string_view name) {
  json::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  json::Set(d, "apiVersion", json::MakeString(api_version, a), a);
  json::Set(d, "kind", json::MakeString(kind, a), a);
  json::Value meta(rapidjson::kObjectType);
  json::Set(meta, "name", json::MakeString(name, a), a);
  json::Set(meta, "namespace", json::MakeString(job.namespace_name(), a), a);
  api::WriteStringMap(meta, "labels", JobPodSelector(job), a);
  json::Value owners(rapidjson::kArrayType);
  owners.PushBack(JobOwnerReference(job, a), a);
  json::Set(meta, "ownerReferences", std::move(owners), a);
  json::Set(d, "metadata", std::move(meta), a);
  return d;
}

}  // namespace basalt::controllers
