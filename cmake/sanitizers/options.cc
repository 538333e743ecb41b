// Built-in runtime options of Basalt's sanitizer builds (cmake/Sanitizers.cmake links this file
// into every executable there). The sanitizer runtimes call these hooks at start-up and parse
// ASAN_OPTIONS / UBSAN_OPTIONS / TSAN_OPTIONS from the environment afterwards, so the
// environment can still override any of them.
//
// - UBSan: every report not matched by ubsan.supp aborts the process (the checks are compiled
//   recoverable only so that ubsan.supp can work), with a stack trace.
// - TSan: reports are fatal at exit (exit code 66, TSan's default), tsan.supp applies.

#define BASALT_SANITIZER_HOOK extern "C" __attribute__((visibility("default"), used))

#if defined(BASALT_ASAN)
BASALT_SANITIZER_HOOK const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1:report_error_type=1:"
         "suppressions=" BASALT_UBSAN_SUPPRESSIONS;
}
BASALT_SANITIZER_HOOK const char* __asan_default_options() {
  return "detect_leaks=1:check_initialization_order=1:strict_init_order=1";
}
#endif

#if defined(BASALT_TSAN)
BASALT_SANITIZER_HOOK const char* __tsan_default_options() {
  return "second_deadlock_stack=1:history_size=4:suppressions=" BASALT_TSAN_SUPPRESSIONS;
}
#endif
