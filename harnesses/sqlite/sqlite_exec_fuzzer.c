// SQLite: the input is SQL, run on a fresh in-memory database, in the manner of SQLite's own
// test/ossfuzz.c (FuzzBench's sqlite3_ossfuzz): bounded run time and memory, no files.
#include <stddef.h>
#include <stdint.h>

#include "sqlite3.h"

// Called every 100 virtual-machine steps: stop a statement after about a million.
static int progress(void *steps) { return ++*(unsigned *)steps > 10000; }

static int row(void *unused, int columns, char **values, char **names) {
  (void)unused, (void)columns, (void)values, (void)names;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int initialized;
  if (!initialized) {
    sqlite3_initialize();
    sqlite3_hard_heap_limit64(25 * 1000 * 1000);
    initialized = 1;
  }
  sqlite3 *db;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 0) != SQLITE_OK) {
    sqlite3_close(db);
    return 0;
  }
  // No ATTACH and no VACUUM INTO: they would write files in the working directory.
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 25000);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 50000);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, 0);
  unsigned steps = 0;
  sqlite3_progress_handler(db, 100, progress, &steps);
  char *sql = sqlite3_mprintf("%.*s", (int)size, data);
  if (sql) sqlite3_exec(db, sql, row, 0, 0);
  sqlite3_free(sql);
  sqlite3_close(db);
  return 0;
}
