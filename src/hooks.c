// Optional harness hooks, looked up as weak symbols.
//
// LLVMFuzzerReset: `reset` mode calls it after every input, so the harness can clear the global
// state (caches, counters) that one input would otherwise leave for the next.
__attribute__((weak)) void LLVMFuzzerReset(void);

int lafuzz_has_reset_hook(void) { return LLVMFuzzerReset != 0; }

void lafuzz_call_reset_hook(void) {
  if (LLVMFuzzerReset) LLVMFuzzerReset();
}
