#include "common/api/field_reader.h"

#include <cstring>
#include <iterator>
#include <limits>
#include <utility>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::api {

namespace {

// Documents larger than this keep their node table to themselves: a cached context does not
// pin the memory of one unusually large review.
constexpr size_t kMaxCachedNodes = 256;
constexpr size_t kMaxCachedKeyBytes = 4096;

}  // namespace

// One spare context per thread, so that validating a review does not allocate (and free) a
// context and its node table each time: a root takes the spare when there is one, and its last
// reader hands the context back, emptied, unless the thread already holds one.
struct FieldReader::ContextCache {
  Context* spare = nullptr;
  ~ContextCache() {
    delete spare;
    spare = nullptr;
  }
};

FieldReader::Context* FieldReader::NewContext() {
  Context*& spare = Cache().spare;
  if (spare == nullptr) return new Context();
  Context* c = spare;
  spare = nullptr;
  return c;
}

void FieldReader::ReleaseContext(Context* c) {
  Context*& spare = Cache().spare;
  if (spare != nullptr || c->more_nodes.capacity() > kMaxCachedNodes ||
      c->owned_keys.capacity() > kMaxCachedKeyBytes) {
    delete c;
    return;
  }
  c->readers = 1;
  c->error = absl::OkStatus();
  c->size = 0;
  c->more_nodes.clear();
  c->owned_keys.clear();
  spare = c;
}

FieldReader::ContextCache& FieldReader::Cache() {
  thread_local ContextCache cache;
  return cache;
}

int32_t FieldReader::Context::Add(const Node& n) {
  if (size < kInline) {
    inline_nodes[size] = n;
  } else {
    // One allocation for the common case of a document a little beyond the inline nodes.
    if (more_nodes.empty()) more_nodes.reserve(2 * kInline);
    more_nodes.push_back(n);
  }
  return static_cast<int32_t>(size++);
}

int32_t FieldReader::Context::AddMember(int32_t parent, std::string_view key,
                                        const json::Value* name, int64_t index) {
  Node n;
  n.parent = parent;
  n.root = false;
  n.index = index;
  if (name != nullptr) {
    n.key = name->GetString();
    n.key_offset = 0;
    n.key_size = name->GetStringLength();
    n.owned = false;
  } else {
    n.key = nullptr;
    n.key_offset = static_cast<uint32_t>(owned_keys.size());
    n.key_size = static_cast<uint32_t>(key.size());
    n.owned = true;
    owned_keys.append(key);
  }
  return Add(n);
}

void FieldReader::Context::AppendPath(int32_t node, std::string& out) const {
  const Node& n = at(node);
  if (n.root) {
    out.append(KeyOf(n));
    return;
  }
  AppendPath(n.parent, out);
  if (!out.empty()) out += '.';
  out.append(KeyOf(n));
  if (n.index >= 0) fmt::format_to(std::back_inserter(out), "[{}]", n.index);
}

FieldReader::FieldReader(const json::Value* obj, std::string path)
    : obj_(nullptr), context_(NewContext()), node_(0) {
  Node root;
  root.key = nullptr;
  root.key_offset = 0;
  root.key_size = static_cast<uint32_t>(path.size());
  root.parent = -1;
  root.owned = true;
  root.root = true;
  root.index = -1;
  context_->owned_keys.assign(path);
  node_ = context_->Add(root);
  SetObject(obj);
}

FieldReader::FieldReader(const json::Value* obj, Context* context, int32_t node)
    : obj_(nullptr), context_(context), node_(node) {
  ++context_->readers;
  SetObject(obj);
}

FieldReader::FieldReader(const FieldReader& other)
    : obj_(other.obj_), context_(other.context_), node_(other.node_) {
  ++context_->readers;
}

FieldReader& FieldReader::operator=(const FieldReader& other) {
  ++other.context_->readers;  // first: `other` may be this reader
  if (--context_->readers == 0) ReleaseContext(context_);
  obj_ = other.obj_;
  context_ = other.context_;
  node_ = other.node_;
  return *this;
}

FieldReader::~FieldReader() {
  if (--context_->readers == 0) ReleaseContext(context_);
}

void FieldReader::SetObject(const json::Value* obj) {
  obj_ = obj;
  if (obj_ != nullptr && obj_->IsNull()) obj_ = nullptr;
  if (obj_ != nullptr && !obj_->IsObject()) {
    if (context_->error.ok()) {
      std::string p = path();
      FailAt(fmt::format("{}: must be an object", p.empty() ? "value" : p));
    }
    obj_ = nullptr;
  }
}

std::string FieldReader::path() const {
  std::string out;
  context_->AppendPath(node_, out);
  return out;
}

int64_t FieldReader::index() const { return context_->at(node_).index; }

std::string FieldReader::PathOf(std::string_view key) const {
  std::string out = path();
  if (!out.empty()) out += '.';
  out.append(key);
  return out;
}

void FieldReader::FailAt(std::string message) {
  if (context_->error.ok()) context_->error = absl::InvalidArgumentError(std::move(message));
}

void FieldReader::Fail(std::string_view key, std::string_view what) {
  if (context_->error.ok()) FailAt(fmt::format("{}: {}", PathOf(key), what));
}

const rapidjson::Value::Member* FieldReader::FindMember(std::string_view key) const {
  if (obj_ == nullptr) return nullptr;
  // As rapidjson's FindMember (the first member of that name), comparing the first character
  // before calling memcmp: most members a validator skips differ in length or first letter.
  const size_t size = key.size();
  for (auto it = obj_->MemberBegin(); it != obj_->MemberEnd(); ++it) {
    const json::Value& name = it->name;
    if (name.GetStringLength() != size) continue;
    const char* chars = name.GetString();
    if (size == 0 || (chars[0] == key[0] && std::memcmp(chars, key.data(), size) == 0)) {
      return &*it;
    }
  }
  return nullptr;
}

const json::Value* FieldReader::Get(std::string_view key) const {
  const rapidjson::Value::Member* m = FindMember(key);
  return m == nullptr || m->value.IsNull() ? nullptr : &m->value;
}

std::string FieldReader::String(std::string_view key) {
  return OptString(key).value_or(std::string());
}

std::string_view FieldReader::View(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return {};
  if (!v->IsString()) {
    Fail(key, "must be a string");
    return {};
  }
  return json::AsView(*v);
}

std::optional<std::string> FieldReader::OptString(std::string_view key) {
  std::optional<std::string_view> v = OptView(key);
  if (!v.has_value()) return std::nullopt;
  return std::string(*v);
}

std::optional<std::string_view> FieldReader::OptView(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    Fail(key, "must be a string");
    return std::nullopt;
  }
  return json::AsView(*v);
}

std::optional<std::string_view> FieldReader::ViewIfPresent(std::string_view key,
                                                           std::string_view not_string) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return v->IsString() ? json::AsView(*v) : not_string;
}

int64_t FieldReader::Int(std::string_view key, int64_t def) { return OptInt(key).value_or(def); }

std::optional<int64_t> FieldReader::OptInt(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsInt64()) {
    Fail(key, "must be an integer");
    return std::nullopt;
  }
  return v->GetInt64();
}

int32_t FieldReader::Int32(std::string_view key, int32_t def) {
  return OptInt32(key).value_or(def);
}

std::optional<int32_t> FieldReader::OptInt32(std::string_view key) {
  std::optional<int64_t> v = OptInt(key);
  if (!v.has_value()) return std::nullopt;
  if (*v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
    Fail(key, "must fit in a 32-bit integer");
    return std::nullopt;
  }
  return static_cast<int32_t>(*v);
}

bool FieldReader::Bool(std::string_view key, bool def) { return OptBool(key).value_or(def); }

std::optional<bool> FieldReader::OptBool(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsBool()) {
    Fail(key, "must be a boolean");
    return std::nullopt;
  }
  return v->GetBool();
}

StringMap FieldReader::StringMapAt(std::string_view key) {
  StringMap out;
  const json::Value* v = Get(key);
  if (v == nullptr) return out;
  if (!v->IsObject()) {
    Fail(key, "must be an object of strings");
    return out;
  }
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    if (!it->value.IsString()) {
      Fail(fmt::format("{}.{}", key, json::AsView(it->name)), "must be a string");
      return out;
    }
    out.emplace(json::AsView(it->name), json::AsView(it->value));
  }
  return out;
}

std::vector<std::string> FieldReader::StringList(std::string_view key) {
  std::vector<std::string> out;
  const json::Value* v = Get(key);
  if (v == nullptr) return out;
  if (!v->IsArray()) {
    Fail(key, "must be an array of strings");
    return out;
  }
  for (const json::Value& e : v->GetArray()) {
    if (!e.IsString()) {
      Fail(key, "must be an array of strings");
      return out;
    }
    out.emplace_back(json::AsView(e));
  }
  return out;
}

resource::ResourceList FieldReader::Resources(std::string_view key) {
  return OptResources(key).value_or(resource::ResourceList());
}

std::optional<resource::ResourceList> FieldReader::OptResources(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  auto r = resource::ResourceList::FromJson(*v);
  if (!r.ok()) {
    Fail(key, MessageOf(r.status()));
    return std::nullopt;
  }
  return *std::move(r);
}

std::optional<Time> FieldReader::OptTime(std::string_view key) {
  const json::Value* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    Fail(key, "must be an RFC 3339 time string");
    return std::nullopt;
  }
  auto t = ParseRfc3339(json::AsView(*v));
  if (!t.ok()) {
    Fail(key, MessageOf(t.status()));
    return std::nullopt;
  }
  return *t;
}

std::string FieldReader::Raw(std::string_view key) {
  const json::Value* v = Get(key);
  return v == nullptr ? std::string() : json::Serialize(*v);
}

const json::Value* FieldReader::ObjectAt(std::string_view key) {
  const json::Value* v = Get(key);
  if (v != nullptr && !v->IsObject()) {
    Fail(key, "must be an object");
    return nullptr;
  }
  return v;
}

FieldReader FieldReader::Child(std::string_view key) {
  const rapidjson::Value::Member* m = FindMember(key);
  const json::Value* v = m == nullptr || m->value.IsNull() ? nullptr : &m->value;
  if (v != nullptr && !v->IsObject()) {
    Fail(key, "must be an object");
    v = nullptr;
  }
  int32_t node = context_->AddMember(node_, key, m == nullptr ? nullptr : &m->name, -1);
  return FieldReader(v, context_, node);
}

std::vector<FieldReader> FieldReader::Elements(std::string_view key) {
  std::vector<FieldReader> out;
  const rapidjson::Value::Member* m = FindMember(key);
  if (m == nullptr || m->value.IsNull()) return out;
  const json::Value& v = m->value;
  if (!v.IsArray()) {
    Fail(key, "must be an array");
    return out;
  }
  out.reserve(v.Size());
  int64_t i = 0;
  for (const json::Value& e : v.GetArray()) {
    const int64_t index = i++;
    if (!e.IsObject()) {
      if (context_->error.ok()) {
        FailAt(fmt::format("{}[{}]: must be an object", PathOf(key), index));
      }
      continue;
    }
    out.push_back(FieldReader(&e, context_, context_->AddMember(node_, key, &m->name, index)));
  }
  return out;
}

const rapidjson::Value::Member* FieldReader::ArrayMember(std::string_view key) {
  const rapidjson::Value::Member* m = FindMember(key);
  if (m == nullptr || m->value.IsNull()) return nullptr;
  if (!m->value.IsArray()) {
    Fail(key, "must be an array");
    return nullptr;
  }
  return m;
}

std::vector<FieldReader> FieldReader::Items(std::string_view key) {
  std::vector<FieldReader> out;
  const rapidjson::Value::Member* m = ArrayMember(key);
  if (m == nullptr) return out;
  out.reserve(m->value.Size());
  auto keep = [&out](FieldReader& item) { out.push_back(item); };
  EachItemOf(*m, key, keep);
  return out;
}

std::vector<Condition> FieldReader::Conditions(std::string_view key) {
  std::vector<Condition> out;
  for (FieldReader& c : Elements(key)) {
    Condition cond;
    cond.type = c.String("type");
    cond.status = c.String("status");
    cond.reason = c.String("reason");
    cond.message = c.String("message");
    cond.last_transition_time = c.OptTime("lastTransitionTime");
    cond.last_probe_time = c.OptTime("lastProbeTime");
    cond.transition_id = c.String("transitionID");
    out.push_back(std::move(cond));
  }
  return out;
}

}  // namespace basalt::api
