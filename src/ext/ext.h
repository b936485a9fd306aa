/*
 * ext.h -- the extensions built into the library (src/ext/NAME/), registered on
 * every connection as SQLite registers its built-in extensions.
 *
 * Layering (docs/architecture.md "src/ext/"): an extension is a client of
 * include/shale.h, like the shell; this one function is the only call from
 * the API layer into src/ext/, made at the end of shale_open_v2.
 *
 * Invariants:
 *  1. ext_builtin_register returns SHALE_OK or SHALE_NOMEM; each extension's
 *     registration is independent of the others.
 */
#ifndef SHALE_EXT_H
#define SHALE_EXT_H

#include "shale.h"

int ext_builtin_register(shale *db);

#endif /* SHALE_EXT_H */
