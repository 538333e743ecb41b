#include "common/runtime/http.h"

#include <exception>

#include "common/util/log.h"

namespace basalt::runtime {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

bool HttpRequest::HasQueryParameter(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    std::string_view part = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (part.substr(0, part.find('=')) == name) return true;
  }
  return false;
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(body);
  return response;
}

void HttpRouter::Handle(std::string_view method, std::string_view path, HttpHandler handler) {
  std::lock_guard<std::mutex> l(mu_);
  for (Entry& route : routes_) {
    if (route.method == method && route.path == path) {
      route.handler = std::move(handler);
      return;
    }
  }
  routes_.push_back(Entry{std::string(method), std::string(path), std::move(handler)});
}

HttpResponse HttpRouter::Route(const HttpRequest& request) const {
  HttpHandler handler;
  std::string allow;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const Entry& route : routes_) {
      if (route.path != request.path) continue;
      if (route.method == request.method) {
        handler = route.handler;
        break;
      }
      if (!allow.empty()) allow += ", ";
      allow += route.method;
    }
  }
  if (!handler) {
    if (allow.empty()) return HttpResponse::Text(404, "404 page not found\n");
    HttpResponse response = HttpResponse::Text(405, "405 method not allowed\n");
    response.headers.emplace_back("Allow", std::move(allow));
    return response;
  }
  try {
    return handler(request);
  } catch (const std::exception& e) {
    BASALT_LOG_ERROR("HTTP handler threw", "method", request.method, "path", request.path, "error",
                     e.what());
  } catch (...) {
    BASALT_LOG_ERROR("HTTP handler threw", "method", request.method, "path", request.path);
  }
  return HttpResponse::Text(500, "500 internal server error\n");
}

}  // namespace basalt::runtime
