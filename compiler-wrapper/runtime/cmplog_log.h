// cmplog_log.h: how a comparison is written into the log (LibAFL's CmpLogMap layout,
// lafuzz_runtime.h), in one place for both runtimes: the standalone one (cmplog.c, its own
// shared-memory log) and the in-process one (the fuzzer crate's src/target/hooks.c, libafl_targets'
// log). Static inline functions only: including it defines no symbol.
#ifndef LAFUZZ_CMPLOG_LOG_H
#define LAFUZZ_CMPLOG_LOG_H

#include "lafuzz_runtime.h"

// A comparison site's entry: LibAFL's hash of its address (libafl_targets' cmplog.c).
static inline uintptr_t cmplog_key(uintptr_t pc) {
  return ((pc >> 4) ^ (pc << 8)) & (CMPLOG_W - 1);
}

// Counts one more execution of site k; returns how many came before (the slot to fill). A
// site seen with another kind of comparison starts over as this kind.
static inline uint16_t cmplog_hit(cmplog_map *map, uintptr_t k, uint8_t kind, uint8_t shape) {
  cmplog_header *h = &map->headers[k];
  if (h->kind != kind || h->hits == 0) {
    h->kind = kind;
    h->hits = 1;
    h->shape = shape;
    return 0;
  }
  if (h->shape < shape) h->shape = shape;
  return h->hits++;
}

// Logs an integer comparison of `size` bytes made at pc.
static inline void cmplog_ins(cmplog_map *map, uintptr_t pc, uint8_t size, uint64_t a, uint64_t b,
                              uint8_t a_const) {
  uintptr_t k = cmplog_key(pc);
  uint16_t hit = cmplog_hit(map, k, CMPLOG_KIND_INS, size - 1) & (CMPLOG_H - 1);
  cmplog_operands *o = &map->vals.operands[k][hit];
  o->v0 = a;
  o->v1 = b;
  o->v0_is_const = a_const;
}

// Logs a switch made at pc on `val` as one comparison per case, each case a site of its own (pc
// + its index, as LibAFL's hook). cases[0]: how many; cases[1]: their size in bits; then the
// values. A switch in a loop, such as an interpreter's dispatch on each instruction, logged
// every case every time (sqlite's virtual machine: 190 cases per instruction, a tracing run as
// long as 60 plain ones); so a switch stops logging once its first case's entry is full: each
// case keeps the switch's first CMPLOG_H values instead of its last, and later turns cost one
// test.
static inline void cmplog_switch(cmplog_map *map, uintptr_t pc, uint64_t val,
                                 const uint64_t *cases) {
  if (cases[0] == 0) return;
  const cmplog_header *first = &map->headers[cmplog_key(pc)];
  if (first->kind == CMPLOG_KIND_INS && first->hits >= CMPLOG_H) return;
  for (uint64_t i = 0; i < cases[0]; i++)
    cmplog_ins(map, pc + i, (uint8_t)(cases[1] / 8), cases[i + 2], val, 1);
}

#endif
