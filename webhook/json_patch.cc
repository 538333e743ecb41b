#include "webhook/json_patch.h"

#include <charconv>
#include <utility>
#include <vector>

#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::webhook {
namespace {

absl::StatusOr<std::vector<std::string>> SplitPointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') {
    return absl::InvalidArgumentError(
        fmt::format("JSON pointer \"{}\" must start with /", pointer));
  }
  size_t pos = 1;
  while (true) {
    size_t next = pointer.find('/', pos);
    std::string_view raw =
        pointer.substr(pos, next == std::string_view::npos ? pointer.npos : next - pos);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return tokens;
}

std::optional<size_t> ParseIndex(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0')) return std::nullopt;
  size_t index = 0;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  if (ec != std::errc() || ptr != token.data() + token.size()) return std::nullopt;
  return index;
}

// Resolves all tokens; nullptr when absent.
json::Value* Resolve(json::Value& root, const std::vector<std::string>& tokens) {
  json::Value* cur = &root;
  for (const auto& t : tokens) {
    if (cur->IsObject()) {
      cur = json::FindMutable(*cur, t);
    } else if (cur->IsArray()) {
      auto idx = ParseIndex(t);
      if (!idx || *idx >= cur->Size()) return nullptr;
      cur = &(*cur)[static_cast<rapidjson::SizeType>(*idx)];
    } else {
      return nullptr;
    }
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

absl::Status AddAt(json::Document& doc, const std::vector<std::string>& tokens, json::Value value) {
  auto& a = doc.GetAllocator();
  if (tokens.empty()) {
    static_cast<json::Value&>(doc) = std::move(value);
    return absl::OkStatus();
  }
  std::vector<std::string> parent_tokens(tokens.begin(), tokens.end() - 1);
  json::Value* parent = Resolve(doc, parent_tokens);
  if (parent == nullptr) return absl::NotFoundError("parent does not exist");
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    json::Set(*parent, last, std::move(value), a);
    return absl::OkStatus();
  }
  if (parent->IsArray()) {
    if (last == "-") {
      parent->PushBack(std::move(value), a);
      return absl::OkStatus();
    }
    auto idx = ParseIndex(last);
    if (!idx || *idx > parent->Size()) return absl::OutOfRangeError("array index out of range");
    parent->PushBack(json::Value(), a);
    for (size_t i = parent->Size() - 1; i > *idx; --i) {
      (*parent)[static_cast<rapidjson::SizeType>(i)] =
          std::move((*parent)[static_cast<rapidjson::SizeType>(i - 1)]);
    }
    (*parent)[static_cast<rapidjson::SizeType>(*idx)] = std::move(value);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("parent is neither an object nor an array");
}

absl::StatusOr<json::Value> RemoveAt(json::Document& doc, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return absl::InvalidArgumentError("cannot remove the whole document");
  std::vector<std::string> parent_tokens(tokens.begin(), tokens.end() - 1);
  json::Value* parent = Resolve(doc, parent_tokens);
  if (parent == nullptr) return absl::NotFoundError("path does not exist");
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    auto it = parent->FindMember(json::Value(rapidjson::StringRef(last.data(), last.size())));
    if (it == parent->MemberEnd()) return absl::NotFoundError("path does not exist");
    json::Value removed = std::move(it->value);
    parent->EraseMember(it);  // keeps member order, unlike RemoveMember
    return removed;
  }
  if (parent->IsArray()) {
    auto idx = ParseIndex(last);
    if (!idx || *idx >= parent->Size()) return absl::NotFoundError("path does not exist");
    json::Value removed = std::move((*parent)[static_cast<rapidjson::SizeType>(*idx)]);
    parent->Erase(parent->Begin() + *idx);
    return removed;
  }
  return absl::NotFoundError("path does not exist");
}

absl::Status ApplyOne(json::Document& doc, const json::Value& op) {
  std::string_view name = json::GetString(op, "op");
  BASALT_ASSIGN_OR_RETURN(std::string_view path, json::RequireString(op, "path"));
  BASALT_ASSIGN_OR_RETURN(std::vector<std::string> tokens, SplitPointer(path));
  auto& a = doc.GetAllocator();
  const json::Value* value = json::Find(op, "value");
  if (name == "add" || name == "replace" || name == "test") {
    if (value == nullptr) return absl::InvalidArgumentError("missing value");
  }
  if (name == "add") return AddAt(doc, tokens, json::Value(*value, a));
  if (name == "remove") return RemoveAt(doc, tokens).status();
  if (name == "replace") {
    json::Value* target = Resolve(doc, tokens);
    if (target == nullptr) return absl::NotFoundError("path does not exist");
    *target = json::Value(*value, a);
    return absl::OkStatus();
  }
  if (name == "test") {
    json::Value* target = Resolve(doc, tokens);
    if (target == nullptr || *target != *value) return absl::FailedPreconditionError("test failed");
    return absl::OkStatus();
  }
  if (name == "move" || name == "copy") {
    BASALT_ASSIGN_OR_RETURN(std::string_view from, json::RequireString(op, "from"));
    BASALT_ASSIGN_OR_RETURN(std::vector<std::string> from_tokens, SplitPointer(from));
    if (name == "move") {
      BASALT_ASSIGN_OR_RETURN(json::Value moved, RemoveAt(doc, from_tokens));
      return AddAt(doc, tokens, std::move(moved));
    }
    json::Value* source = Resolve(doc, from_tokens);
    if (source == nullptr) return absl::NotFoundError("from path does not exist");
    return AddAt(doc, tokens, json::Value(*source, a));
  }
  return absl::InvalidArgumentError(fmt::format("unknown op \"{}\"", name));
}

}  // namespace

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonPatch::JsonPatch() : ops_(std::make_unique<json::Document>()) { ops_->SetArray(); }

void JsonPatch::Push(std::string_view op, std::string_view path, json::Value value) {
  auto& a = ops_->GetAllocator();
  json::Value entry(rapidjson::kObjectType);
  entry.AddMember("op", json::MakeString(op, a), a);
  entry.AddMember("path", json::MakeString(path, a), a);
  if (!value.IsNull() || op != "remove") entry.AddMember("value", std::move(value), a);
  ops_->PushBack(std::move(entry), a);
}

void JsonPatch::Add(std::string_view path, const json::Value& value) {
  Push("add", path, json::Value(value, ops_->GetAllocator()));
}

void JsonPatch::AddString(std::string_view path, std::string_view value) {
  Push("add", path, json::MakeString(value, ops_->GetAllocator()));
}

void JsonPatch::AddInt(std::string_view path, int64_t value) {
  Push("add", path, json::Value(value));
}

void JsonPatch::AddBool(std::string_view path, bool value) {
  Push("add", path, json::Value(value));
}

void JsonPatch::Replace(std::string_view path, const json::Value& value) {
  Push("replace", path, json::Value(value, ops_->GetAllocator()));
}

void JsonPatch::ReplaceInt(std::string_view path, int64_t value) {
  Push("replace", path, json::Value(value));
}

void JsonPatch::Remove(std::string_view path) { Push("remove", path, json::Value()); }

std::string JsonPatch::ToJson() const { return json::Serialize(*ops_); }

absl::Status ApplyJsonPatch(json::Document& doc, std::string_view patch) {
  BASALT_ASSIGN_OR_RETURN(json::Document ops, json::Parse(patch));
  if (!ops.IsArray()) return absl::InvalidArgumentError("JSON patch must be an array");
  for (rapidjson::SizeType i = 0; i < ops.Size(); ++i) {
    absl::Status s = ApplyOne(doc, ops[i]);
    if (!s.ok()) {
      return absl::Status(
          s.code(), fmt::format("patch operation {} ({} {}): {}", i, json::GetString(ops[i], "op"),
                                json::GetString(ops[i], "path"), MessageOf(s)));
    }
  }
  return absl::OkStatus();
}

}  // namespace basalt::webhook
