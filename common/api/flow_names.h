#pragma once
// The names of Volcano's flow.volcano.sh/v1alpha1 API (JobFlow, JobTemplate): group, version,
// kinds and plurals, in one place for the client's resource table, the typed views, the
// controllers and vcctl. Header-only constants, no dependencies.

#include <string_view>

namespace basalt::api {

inline constexpr std::string_view kFlowGroup = "flow.volcano.sh";
inline constexpr std::string_view kFlowVersion = "v1alpha1";
inline constexpr std::string_view kFlowApiVersion = "flow.volcano.sh/v1alpha1";
inline constexpr std::string_view kJobFlowKind = "JobFlow";
inline constexpr std::string_view kJobFlowPlural = "jobflows";
inline constexpr std::string_view kJobTemplateKind = "JobTemplate";
inline constexpr std::string_view kJobTemplatePlural = "jobtemplates";

}  // namespace basalt::api
