#include "controllers/queue/queue_controller.h"

#include <deque>
#include <map>
#include <mutex>

#include "common/api/vocabulary.h"
#include "common/client/errors.h"
#include "common/util/log.h"
#include "common/util/status.h"
#include "fmt/format.h"

namespace basalt::controllers {
namespace {

constexpr char kByQueueIndex[] = "queue";
constexpr auto kMinWriteInterval = std::chrono::seconds(1);

std::string_view StringAt(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* p = json::FindPath(v, path);
  return p != nullptr ? json::AsView(*p) : std::string_view();
}

std::string QueueOf(const json::Value& pg) {
  std::string_view q = StringAt(pg, {"spec", "queue"});
  return q.empty() ? std::string(api::kDefaultQueue) : std::string(q);
}

}  // namespace

QueueCounts CountPodGroups(const std::vector<const json::Value*>& pod_groups) {
  QueueCounts c;
  for (const json::Value* pg : pod_groups) {
    const std::string_view phase = StringAt(*pg, {"status", "phase"});
    ++c.total;
    if (phase == api::kPodGroupInqueue) {
      ++c.inqueue;
    } else if (phase == api::kPodGroupRunning) {
      ++c.running;
    } else if (phase == api::kPodGroupUnknown) {
      ++c.unknown;
    } else if (phase == api::kPodGroupCompleted) {
      ++c.completed;
    } else {
      ++c.pending;
    }
  }
  return c;
}

std::string NextQueueState(std::string_view name, std::string_view state, std::string_view action,
                           bool has_pod_groups) {
  if (name == api::kRootQueue) return std::string(api::kQueueOpen);
  std::string current(state.empty() ? api::kQueueOpen : state);
  if (action == api::ActionName(api::Action::kOpenQueue)) return std::string(api::kQueueOpen);
  if (action == api::ActionName(api::Action::kCloseQueue)) {
    if (current == api::kQueueClosed) return current;
    return std::string(has_pod_groups ? api::kQueueClosing : api::kQueueClosed);
  }
  if (current == api::kQueueClosing && !has_pod_groups) return std::string(api::kQueueClosed);
  return current;
}

std::string RootQueueJson() {
  return fmt::format(
      R"({{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{}"}},)"
      R"("spec":{{"weight":1,"reclaimable":false}}}})",
      api::kRootQueue);
}

std::optional<std::string> DefaultParentPatch(const json::Value& queue) {
  if (StringAt(queue, {"metadata", "name"}) == api::kRootQueue) return std::nullopt;
  if (!StringAt(queue, {"spec", "parent"}).empty()) return std::nullopt;
  return fmt::format(R"({{"spec":{{"parent":"{}"}}}})", api::kRootQueue);
}

std::optional<std::string> QueueStatusPatch(const json::Value* s, std::string_view state,
                                            const QueueCounts& c) {
  static const json::Value kEmpty(rapidjson::kObjectType);
  const json::Value& cur = s != nullptr && s->IsObject() ? *s : kEmpty;
  if (json::GetString(cur, "state") == state && json::GetInt(cur, "pending") == c.pending &&
      json::GetInt(cur, "inqueue") == c.inqueue && json::GetInt(cur, "running") == c.running &&
      json::GetInt(cur, "unknown") == c.unknown && json::GetInt(cur, "completed") == c.completed) {
    return std::nullopt;
  }
  return fmt::format(
      R"({{"status":{{"state":"{}","pending":{},"inqueue":{},"running":{},"unknown":{},"completed":{}}}}})",
      state, c.pending, c.inqueue, c.running, c.unknown, c.completed);
}

QueuePodGroupMetrics::QueuePodGroupMetrics(prometheus::Registry& registry) {
  for (const char* phase : {"Inqueue", "Pending", "Running", "Unknown", "Completed"}) {
    std::string lower(phase);
    lower[0] = static_cast<char>(lower[0] - 'A' + 'a');
    families_.push_back(&prometheus::BuildGauge()
                             .Name(fmt::format("volcano_queue_pod_group_{}_count", lower))
                             .Help(fmt::format("The number of {} PodGroup in this queue", phase))
                             .Register(registry));
  }
}

void QueuePodGroupMetrics::Set(const std::string& queue, const QueueCounts& c) {
  const int32_t values[] = {c.inqueue, c.pending, c.running, c.unknown, c.completed};
  for (size_t i = 0; i < families_.size(); ++i) {
    families_[i]->Add({{"queue_name", queue}}).Set(values[i]);
  }
}

void QueuePodGroupMetrics::Remove(const std::string& queue) {
  for (prometheus::Family<prometheus::Gauge>* f : families_) {
    prometheus::Gauge& g = f->Add({{"queue_name", queue}});
    f->Remove(&g);
  }
}

namespace {

struct QueueCommand {
  std::string action;
  std::string ns;
  std::string name;
  std::string uid;
};

class QueueController final : public Controller {
 public:
  explicit QueueController(const ControllerContext& ctx)
      : ctx_(ctx), clock_(ctx.clock != nullptr ? ctx.clock : Clock::Real()) {
    if (ctx.metrics_registry != nullptr) {
      pod_group_metrics_ = std::make_unique<QueuePodGroupMetrics>(*ctx.metrics_registry);
    }
    queues_ = ctx.informers->InformerFor(client::Queues());
    pod_groups_ = ctx.informers->InformerFor(client::PodGroups());
    (void)pod_groups_->AddIndexers(
        {{kByQueueIndex, informer::IndexBy<json::Document>([](const json::Document& pg) {
            return std::vector<std::string>{QueueOf(pg)};
          })}});
    commands_ = ctx.informers->InformerFor(client::Commands());
    loop_ =
        std::make_unique<ReconcileLoop>(ReconcileLoopOptions{.name = "queue",
                                                             .clock = ctx.clock,
                                                             .metrics = ctx.metrics,
                                                             .queue_metrics = ctx.queue_metrics},
                                        [this](const std::string& key) { return Reconcile(key); });

    queues_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { loop_->Add(o.key()); },
        .on_update = [this](const informer::Object&,
                            const informer::Object& o) { loop_->Add(o.key()); },
        .on_delete = [this](const informer::Object& o, bool) { loop_->Add(o.key()); }});
    pod_groups_->AddEventHandler(informer::EventHandler{
        .on_add = [this](const informer::Object& o) { loop_->Add(QueueOf(o.doc())); },
        .on_update =
            [this](const informer::Object& old_obj, const informer::Object& new_obj) {
              const std::string a = QueueOf(old_obj.doc()), b = QueueOf(new_obj.doc());
              if (a != b) loop_->Add(a);
              if (a != b || StringAt(old_obj.doc(), {"status", "phase"}) !=
                                StringAt(new_obj.doc(), {"status", "phase"})) {
                loop_->Add(b);
              }
            },
        .on_delete = [this](const informer::Object& o, bool) { loop_->Add(QueueOf(o.doc())); }});
    auto on_command = [this](const informer::Object& o) {
      const json::Value* target = json::Find(o.doc(), "target");
      if (target == nullptr || json::GetString(*target, "kind") != api::kQueueKind) return;
      QueueCommand c{std::string(json::GetString(o.doc(), "action")),
                     std::string(o.namespace_name()), std::string(o.name()),
                     std::string(StringAt(o.doc(), {"metadata", "uid"}))};
      const std::string queue(json::GetString(*target, "name"));
      {
        std::lock_guard<std::mutex> l(mu_);
        if (consumed_.count(c.uid) > 0) return;
        commands_by_queue_[queue].push_back(std::move(c));
      }
      loop_->Add(queue);
    };
    commands_->AddEventHandler(informer::EventHandler{
        .on_add = on_command,
        .on_update = [on_command](const informer::Object&,
                                  const informer::Object& o) { on_command(o); },
        .on_delete = nullptr});
  }

  std::string_view Name() const override { return "queue"; }
  void Run(std::stop_token stop) override {
    loop_->Add(std::string(api::kRootQueue));  // create it if missing
    loop_->Run(stop, std::max(1, ctx_.workers / 2));
  }
  bool HasSynced() const override {
    return queues_->HasSynced() && pod_groups_->HasSynced() && commands_->HasSynced();
  }

 private:
  ReconcileResult Reconcile(const std::string& name) {
    informer::Object queue = queues_->store().Get(name);
    if (!queue && name == api::kRootQueue) {
      {
        std::lock_guard<std::mutex> l(mu_);
        memory_.erase(name);  // a new root starts without the old one's writes
      }
      return EnsureRootQueue();
    }
    if (!queue) {
      if (pod_group_metrics_) pod_group_metrics_->Remove(name);
      std::lock_guard<std::mutex> l(mu_);
      commands_by_queue_.erase(name);
      memory_.erase(name);
      return std::optional<Clock::Duration>();
    }
    absl::StatusOr<std::vector<informer::Object>> pgs =
        pod_groups_->store().ByIndex(kByQueueIndex, name);
    std::vector<const json::Value*> docs;
    if (pgs.ok()) {
      for (const informer::Object& o : *pgs) docs.push_back(&o.doc());
    }
    const QueueCounts counts = CountPodGroups(docs);
    if (pod_group_metrics_) pod_group_metrics_->Set(name, counts);

    if (std::optional<std::string> parent = DefaultParentPatch(queue.doc())) {
      absl::StatusOr<json::Document> r =
          ctx_.client->Patch(client::Queues(), "", name, client::PatchType::kMerge, *parent);
      if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
      if (r.ok()) BASALT_LOG_INFO("Defaulted the queue's parent", "queue", name, "parent", "root");
    }

    std::deque<QueueCommand> commands;
    Memory memory;
    {
      std::lock_guard<std::mutex> l(mu_);
      commands.swap(commands_by_queue_[name]);
      memory = memory_[name];
    }
    std::string state(StringAt(queue.doc(), {"status", "state"}));
    if (memory.state_override) {
      if (*memory.state_override == state) {
        memory.state_override.reset();
      } else {
        state = *memory.state_override;
      }
    }
    for (const QueueCommand& c : commands) {
      state = NextQueueState(name, state, c.action, counts.total > 0);
      memory.state_override = state;
      BASALT_LOG_INFO("Queue command", "queue", name, "action", c.action, "state", state);
      client::DeleteOptions o;
      o.precondition_uid = c.uid;
      absl::Status s = ctx_.client->Delete(client::Commands(), c.ns, c.name, o);
      if (!s.ok() && !absl::IsNotFound(s) && !client::IsConflict(s)) {
        BASALT_LOG_WARNING("Cannot delete consumed Command", "command", c.name, "error",
                           MessageOf(s));
      }
      std::lock_guard<std::mutex> l(mu_);
      consumed_.insert(c.uid);
    }
    state = NextQueueState(name, state, "", counts.total > 0);
    if (state != StringAt(queue.doc(), {"status", "state"})) memory.state_override = state;

    ReconcileResult result = std::optional<Clock::Duration>();
    const json::Value* current_status = json::Find(queue.doc(), "status");
    std::optional<std::string> patch = QueueStatusPatch(current_status, state, counts);
    const std::string resource_version(StringAt(queue.doc(), {"metadata", "resourceVersion"}));
    if (!memory.written_rv.empty() && resource_version == memory.written_rv) {
      memory.seen_own_write = true;
    }
    if (patch && memory.last_patch == *patch && !memory.seen_own_write &&
        clock_->Now() - memory.last_write < std::chrono::seconds(10)) {
      // Written already and the cache has not shown that write yet (it may show versions from
      // before it: another writer's, such as the scheduler's allocated). Once it has, a version
      // that says otherwise (someone edited the status) is corrected.
      patch.reset();
    }
    if (patch) {
      const Clock::TimePoint now = clock_->Now();
      if (memory.last_write != Clock::TimePoint() && now - memory.last_write < kMinWriteInterval) {
        result = std::optional<Clock::Duration>(kMinWriteInterval - (now - memory.last_write));
      } else {
        absl::StatusOr<json::Document> r = ctx_.client->Patch(
            client::Queues(), "", name, client::PatchType::kMerge, *patch, "status");
        if (!r.ok()) {
          std::lock_guard<std::mutex> l(mu_);
          memory_[name] = memory;
          return r.status();
        }
        memory.last_write = now;
        memory.last_patch = *patch;
        memory.written_rv = std::string(StringAt(*r, {"metadata", "resourceVersion"}));
        memory.seen_own_write = false;
      }
    }
    std::lock_guard<std::mutex> l(mu_);
    memory_[name] = memory;
    return result;
  }

  // The cache has no root: read the server (the cache may lag a re-create) and create it.
  ReconcileResult EnsureRootQueue() {
    const std::string root(api::kRootQueue);
    absl::StatusOr<json::Document> existing = ctx_.client->Get(client::Queues(), "", root);
    if (existing.ok()) return std::optional<Clock::Duration>();
    if (!absl::IsNotFound(existing.status())) return existing.status();
    absl::StatusOr<json::Document> created =
        ctx_.client->Create(client::Queues(), "", RootQueueJson());
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
    if (created.ok()) BASALT_LOG_INFO("Created the root queue", "queue", root);
    return std::optional<Clock::Duration>();
  }

  struct Memory {
    std::optional<std::string> state_override;  // set by a command, until the cache shows it
    Clock::TimePoint last_write{};
    std::string last_patch;
    std::string written_rv;       // the resourceVersion the last write produced
    bool seen_own_write = false;  // the cache has shown that version
  };

  const ControllerContext ctx_;
  Clock* const clock_;
  informer::SharedInformer* queues_;
  informer::SharedInformer* pod_groups_;
  informer::SharedInformer* commands_;
  std::unique_ptr<ReconcileLoop> loop_;
  std::unique_ptr<QueuePodGroupMetrics> pod_group_metrics_;  // null without a registry
  std::mutex mu_;
  std::map<std::string, std::deque<QueueCommand>> commands_by_queue_;  // guarded by mu_
  std::map<std::string, Memory> memory_;                               // guarded by mu_
  std::set<std::string> consumed_;                                     // guarded by mu_
};

}  // namespace

absl::StatusOr<std::unique_ptr<Controller>> NewQueueController(const ControllerContext& ctx) {
  return std::unique_ptr<Controller>(new QueueController(ctx));
}

}  // namespace basalt::controllers
