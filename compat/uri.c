/*
 * uri.c -- file names as SQLite's open sees them: `file:` URIs (authority,
 * percent-decoding, query parameters, vfs=, mode=ro|rw|rwc|memory,
 * cache=shared|private, immutable=), the SQLITE_OPEN_URI / SQLITE_CONFIG_URI
 * rules, shared-cache in-memory databases, and the filename objects that
 * sqlite3_db_filename returns and sqlite3_create_filename makes, read by
 * sqlite3_uri_parameter/boolean/int64/key and sqlite3_filename_database/
 * journal/wal.
 *
 * A filename object has SQLite's layout (a VFS author's code walks it):
 *   4 zero bytes | database\0 | key\0value\0 ... | \0 | journal\0 | wal\0 | \0\0
 * and the pointer handed out is the database name's first byte.
 *
 * Shared-cache memory databases (`file::memory:?cache=shared`,
 * `file:NAME?mode=memory&cache=shared`, or without cache= after
 * sqlite3_enable_shared_cache(1)) become one named file of the memdb
 * VFS per name ("shale-shared-memdb:NAME"), which every connection of the
 * process opening that name shares; a count per name deletes the file when
 * its last connection closes, as SQLite frees the shared memdb.
 *
 * Owns: the shared memdb name table; filename objects (C allocator, owned
 * by the registry entry of their connection, or by the caller of
 * sqlite3_create_filename until sqlite3_free_filename).
 *
 * Invariants:
 *  1. compat_open_parse never opens anything: it turns (name, flags, vfs)
 *     into what shale_open_v2 is given, or an error code and SQLite's
 *     message; the connection is opened by sqlite3_open_v2.
 *  2. A memory database has the empty filename object (no parameters), as
 *     in SQLite.
 *  3. shared_mu guards the name table; a name's count is the number of open
 *     connections on it, and its memdb file exists while the count is > 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/os/os.h"
#include "compat_int.h"

static int uri_default = 1; /* SQLITE_USE_URI, as Debian builds SQLite */
static int shared_default;  /* sqlite3_enable_shared_cache */

void compat_config_uri(int on) { uri_default = on != 0; }

/* As SQLite: later opens without SQLITE_OPEN_PRIVATECACHE (or cache=private)
 * ask for a shared cache, which makes a named memory database (a URI) one
 * per name; a file still gets a private cache (docs/compat.md). */
int sqlite3_enable_shared_cache(int onoff) {
  __atomic_store_n(&shared_default, onoff != 0, __ATOMIC_RELAXED);
  return SQLITE_OK;
}

/* ---------------------------------------------------------------- filename objects */

static size_t zlen(const char *z) { return z ? strlen(z) : 0; }

static char *put(char *p, const char *z) {
  size_t n = zlen(z);
  if (n) memcpy(p, z, n);
  p[n] = 0;
  return p + n + 1;
}

/* A filename object (malloc'ed block; the name starts 4 bytes in). */
static char *fname_new(const char *db, const char *journal, const char *wal, int npair,
                       const char *const *kv) {
  size_t n = 4 + zlen(db) + zlen(journal) + zlen(wal) + 6;
  for (int i = 0; i < 2 * npair; i++) n += zlen(kv[i]) + 1;
  char *b = malloc(n), *p = b;
  if (!b) return NULL;
  memset(p, 0, 4);
  p = put(p + 4, db);
  for (int i = 0; i < 2 * npair; i++) p = put(p, kv[i]);
  *p++ = 0;
  p = put(p, journal);
  p = put(p, wal);
  *p++ = 0;
  *p++ = 0;
  return b;
}

size_t compat_fname_size(const char *fo) {
  const char *p = fo + 4;
  p += strlen(p) + 1; /* database */
  while (*p) {        /* key, value */
    p += strlen(p) + 1;
    p += strlen(p) + 1;
  }
  p++;                /* the empty key */
  p += strlen(p) + 1; /* journal */
  p += strlen(p) + 1; /* WAL */
  return (size_t)(p - fo) + 2;
}

const char *sqlite3_create_filename(const char *db, const char *journal, const char *wal,
                                    int nparam, const char **params) {
  char *b = fname_new(db, journal, wal, nparam > 0 ? nparam : 0, params);
  return b ? b + 4 : NULL;
}
void sqlite3_free_filename(const char *z) {
  if (z) free((char *)z - 4);
}

/* Back from any pointer SQLite may hand a VFS to the name's first byte. */
static const char *db_name(const char *z) {
  while (z[-1] || z[-2] || z[-3] || z[-4]) z--;
  return z;
}

const char *sqlite3_filename_database(const char *z) { return z ? db_name(z) : NULL; }
const char *sqlite3_filename_journal(const char *z) {
  if (!z) return NULL;
  z = db_name(z);
  z += strlen(z) + 1;
  while (*z) {
    z += strlen(z) + 1;
    z += strlen(z) + 1;
  }
  return z + 1;
}
const char *sqlite3_filename_wal(const char *z) {
  z = sqlite3_filename_journal(z);
  return z ? z + strlen(z) + 1 : NULL;
}

const char *sqlite3_uri_parameter(const char *z, const char *key) {
  if (!z || !key) return NULL;
  z = db_name(z);
  z += strlen(z) + 1;
  while (*z) {
    int hit = !strcmp(z, key);
    z += strlen(z) + 1;
    if (hit) return z;
    z += strlen(z) + 1;
  }
  return NULL;
}
const char *sqlite3_uri_key(const char *z, int n) {
  if (!z || n < 0) return NULL;
  z = db_name(z);
  z += strlen(z) + 1;
  while (*z && n-- > 0) {
    z += strlen(z) + 1;
    z += strlen(z) + 1;
  }
  return *z ? z : NULL;
}

/* SQLite's boolean words (case-insensitive) or a number; else dflt. */
static int boolean_of(const char *z, int dflt) {
  if (*z >= '0' && *z <= '9') return atoi(z) != 0;
  static const char *const words[] = {"on", "no", "off", "false", "yes", "true"};
  static const int vals[] = {1, 0, 0, 0, 1, 1};
  for (int i = 0; i < 6; i++)
    if (!sqlite3_stricmp(z, words[i])) return vals[i];
  return dflt;
}
int sqlite3_uri_boolean(const char *z, const char *key, int dflt) {
  const char *v = sqlite3_uri_parameter(z, key);
  return v ? boolean_of(v, dflt != 0) : dflt != 0;
}

/* Decimal (optional sign, surrounding spaces) or 0x hex, all of it. */
static int int64_of(const char *z, sqlite3_int64 *out) {
  if (z[0] == '0' && (z[1] == 'x' || z[1] == 'X')) {
    sqlite3_uint64 u = 0;
    int k = 2;
    for (; z[k]; k++) {
      int c = z[k], d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (d < 0 || k > 17) return 0;
      u = u * 16 + (unsigned)d;
    }
    if (k == 2) return 0;
    *out = (sqlite3_int64)u;
    return 1;
  }
  while (*z == ' ') z++;
  int neg = *z == '-';
  if (*z == '-' || *z == '+') z++;
  sqlite3_uint64 u = 0;
  int nd = 0;
  for (; *z >= '0' && *z <= '9'; z++, nd++) {
    if (u > (0x8000000000000000ULL - (sqlite3_uint64)(*z - '0')) / 10) return 0;
    u = u * 10 + (sqlite3_uint64)(*z - '0');
  }
  while (*z == ' ') z++;
  if (!nd || *z || (!neg && u > 0x7fffffffffffffffULL)) return 0;
  *out = neg ? (sqlite3_int64)(0 - u) : (sqlite3_int64)u;
  return 1;
}
sqlite3_int64 sqlite3_uri_int64(const char *z, const char *key, sqlite3_int64 dflt) {
  const char *v = sqlite3_uri_parameter(z, key);
  sqlite3_int64 x;
  return v && int64_of(v, &x) ? x : dflt;
}

/* A VFS is handed no sqlite3_file here (Shale's VFS has no such object). */

/* ---------------------------------------------------------------- shared memory databases */

typedef struct Shared {
  char *name; /* the memdb file's name */
  int n;
  struct Shared *next;
} Shared;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static Shared *shared;

#define SHARED_PREFIX "shale-shared-memdb:"

static char *shared_ref(const char *key) {
  size_t n = strlen(SHARED_PREFIX) + strlen(key) + 1;
  char *name = malloc(n);
  if (!name) return NULL;
  memcpy(name, SHARED_PREFIX, strlen(SHARED_PREFIX));
  memcpy(name + strlen(SHARED_PREFIX), key, strlen(key) + 1);
  pthread_mutex_lock(&shared_mu);
  Shared *s = shared;
  while (s && strcmp(s->name, name)) s = s->next;
  if (!s && (s = malloc(sizeof *s)) != NULL) {
    s->name = name;
    s->n = 0;
    s->next = shared;
    shared = s;
    name = NULL;
  }
  if (s) s->n++;
  char *r = s ? strdup(s->name) : NULL;
  pthread_mutex_unlock(&shared_mu);
  free(name);
  return r;
}

void compat_shared_unref(const char *name) {
  if (!name) return;
  int gone = 0;
  pthread_mutex_lock(&shared_mu);
  for (Shared **pp = &shared; *pp; pp = &(*pp)->next)
    if (!strcmp((*pp)->name, name)) {
      Shared *s = *pp;
      if (--s->n == 0) {
        *pp = s->next;
        free(s->name);
        free(s);
        gone = 1;
      }
      break;
    }
  pthread_mutex_unlock(&shared_mu);
  if (!gone) return;
  OsVfs *v = os_vfs_find("memdb");
  if (v && v->delete) { /* the file and its journals */
    static const char *const sfx[] = {"", "-journal", "-wal", "-shm"};
    for (int i = 0; i < 4; i++) {
      char *z = sqlite3_mprintf("%s%s", name, sfx[i]);
      if (z) v->delete (v, z, 0);
      sqlite3_free(z);
    }
  }
}

/* ---------------------------------------------------------------- parsing */

static int hexval(int c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* Percent-decode z[0..n) into out (NUL-terminated); returns its length. */
static size_t decode(const char *z, size_t n, char *out) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (z[i] == '%' && i + 2 < n + 0 && hexval(z[i + 1]) >= 0 && hexval(z[i + 2]) >= 0) {
      int c = hexval(z[i + 1]) * 16 + hexval(z[i + 2]);
      i += 2;
      if (c == 0) continue; /* an encoded NUL would end the name: dropped */
      out[k++] = (char)c;
    } else {
      out[k++] = z[i];
    }
  }
  out[k] = 0;
  return k;
}

static char *absolute(const char *f) {
  if (f[0] == '/') return strdup(f);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return strdup(f);
  size_t a = strlen(cwd), b = strlen(f);
  char *z = malloc(a + b + 2);
  if (!z) return NULL;
  memcpy(z, cwd, a);
  z[a] = '/';
  memcpy(z + a + 1, f, b + 1);
  return z;
}

char *compat_fname_file(const char *path, int npair, const char *const *kv) {
  char *abs = absolute(path), *b = NULL;
  char *j = abs ? malloc(strlen(abs) + 9) : NULL, *w = abs ? malloc(strlen(abs) + 5) : NULL;
  if (j && w) {
    strcpy(j, abs);
    strcat(j, "-journal");
    strcpy(w, abs);
    strcat(w, "-wal");
    b = fname_new(abs, j, w, npair, kv);
  }
  free(abs);
  free(j);
  free(w);
  return b;
}

static int fail(CompatOpen *o, int rc, char *msg) {
  o->err = msg;
  return rc ? rc : SQLITE_NOMEM;
}

static int mode_of(const char *v, const char *const *names, const int *bits, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v, names[i])) return bits[i];
  return 0;
}

int compat_open_parse(const char *filename, int flags, const char *vfs, CompatOpen *o) {
  memset(o, 0, sizeof *o);
  if (__atomic_load_n(&shared_default, __ATOMIC_RELAXED) && !(flags & SQLITE_OPEN_PRIVATECACHE))
    flags |= SQLITE_OPEN_SHAREDCACHE;
  o->flags = flags;
  o->vfs = vfs;
  const char *f = filename ? filename : "";
  int is_uri = ((flags & SQLITE_OPEN_URI) || uri_default) && !strncmp(f, "file:", 5);
  char **kv = NULL; /* decoded key, value pairs */
  int npair = 0, rc = SQLITE_OK;
  if (!is_uri) {
    o->path = strdup(f);
    if (!o->path) return fail(o, SQLITE_NOMEM, NULL);
  } else {
    const char *p = f + 5;
    if (p[0] == '/' && p[1] == '/') { /* authority: empty or localhost */
      const char *a = p + 2, *e = a;
      while (*e && *e != '/') e++;
      if (e > a && !(e - a == 9 && !strncmp(a, "localhost", 9)))
        return fail(o, SQLITE_ERROR,
                    sqlite3_mprintf("invalid uri authority: %.*s", (int)(e - a), a));
      p = e;
    }
    size_t plen = strcspn(p, "?#");
    o->path = malloc(plen + 1);
    if (!o->path) return fail(o, SQLITE_NOMEM, NULL);
    decode(p, plen, o->path);
    p += plen;
    if (*p == '?') {
      p++;
      size_t qlen = strcspn(p, "#");
      int cap = 1;
      for (size_t i = 0; i < qlen; i++) cap += p[i] == '&';
      kv = calloc(2 * (size_t)cap, sizeof *kv);
      if (!kv) return fail(o, SQLITE_NOMEM, NULL);
      for (size_t i = 0; i < qlen;) {
        size_t e = i;
        while (e < qlen && p[e] != '&') e++;
        size_t eq = i;
        while (eq < e && p[eq] != '=') eq++;
        if (eq > i) {
          char *k = malloc(eq - i + 1), *v = malloc(e > eq ? e - eq : 1);
          if (!k || !v) {
            free(k);
            free(v);
            rc = SQLITE_NOMEM;
            break;
          }
          decode(p + i, eq - i, k);
          decode(p + eq + 1, e > eq ? e - eq - 1 : 0, v);
          if (e == eq) v[0] = 0;
          kv[2 * npair] = k;
          kv[2 * npair + 1] = v;
          npair++;
        }
        i = e + 1;
      }
    }
    for (int i = 0; i < npair && rc == SQLITE_OK; i++) {
      const char *k = kv[2 * i], *v = kv[2 * i + 1];
      if (!strcmp(k, "vfs")) {
        free(o->vfs_own);
        o->vfs = o->vfs_own = strdup(v);
        if (!o->vfs_own) rc = SQLITE_NOMEM;
      } else if (!strcmp(k, "mode")) {
        static const char *const names[] = {"ro", "rw", "rwc", "memory"};
        static const int bits[] = {SQLITE_OPEN_READONLY, SQLITE_OPEN_READWRITE,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, SQLITE_OPEN_MEMORY};
        int mask =
            SQLITE_OPEN_READONLY | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_MEMORY;
        int m = mode_of(v, names, bits, 4);
        if (!m) {
          rc = fail(o, SQLITE_ERROR, sqlite3_mprintf("no such access mode: %s", v));
        } else if ((m & ~SQLITE_OPEN_MEMORY) > (o->flags & mask)) {
          rc = fail(o, SQLITE_PERM, sqlite3_mprintf("access mode not allowed: %s", v));
        } else if (m == SQLITE_OPEN_MEMORY) { /* a memory database is always writable */
          o->flags |= SQLITE_OPEN_MEMORY;
        } else {
          o->flags = (o->flags & ~mask) | m;
        }
      } else if (!strcmp(k, "cache")) {
        static const char *const names[] = {"shared", "private"};
        static const int bits[] = {SQLITE_OPEN_SHAREDCACHE, SQLITE_OPEN_PRIVATECACHE};
        int m = mode_of(v, names, bits, 2);
        if (!m)
          rc = fail(o, SQLITE_ERROR, sqlite3_mprintf("no such cache mode: %s", v));
        else
          o->flags = (o->flags & ~(SQLITE_OPEN_SHAREDCACHE | SQLITE_OPEN_PRIVATECACHE)) | m;
      }
    }
  }
  const char *path = o->path;
  int mem = !path[0] || !strcmp(path, ":memory:") || (o->flags & SQLITE_OPEN_MEMORY);
  if (rc == SQLITE_OK && o->vfs && !sqlite3_vfs_find(o->vfs))
    rc = fail(o, SQLITE_ERROR, sqlite3_mprintf("no such vfs: %s", o->vfs));
  if (rc == SQLITE_OK && mem && (o->flags & SQLITE_OPEN_SHAREDCACHE) && is_uri) {
    o->shared = shared_ref(path);
    free(o->path);
    o->path = o->shared ? strdup(o->shared) : NULL;
    if (!o->path) rc = fail(o, SQLITE_NOMEM, NULL);
    o->vfs = "memdb";
    /* MEMORY stays: a memdb file that reports itself as memory (file name "");
     * the first connection makes it */
    o->flags &= ~SQLITE_OPEN_READONLY;
    o->flags |= SQLITE_OPEN_MEMORY | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }
  /* immutable=1: nothing may change the file, so it opens read-only and
   * unlocked; nolock=1: unlocked */
  if (rc == SQLITE_OK && !mem && is_uri) {
    for (int i = 0; i < npair; i++) {
      if (!strcmp(kv[2 * i], "immutable") && boolean_of(kv[2 * i + 1], 0))
        o->flags = (o->flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) |
                   SQLITE_OPEN_READONLY | SHALE_OPEN_IMMUTABLE | SHALE_OPEN_NOLOCK;
      if (!strcmp(kv[2 * i], "nolock") && boolean_of(kv[2 * i + 1], 0))
        o->flags |= SHALE_OPEN_NOLOCK;
    }
  }
  if (rc == SQLITE_OK) {
    if (mem) {
      o->fname = fname_new("", "", "", 0, NULL);
    } else {
      o->fname = compat_fname_file(path, npair, (const char *const *)kv);
    }
    if (!o->fname) rc = fail(o, SQLITE_NOMEM, NULL);
  }
  for (int i = 0; i < 2 * npair; i++) free(kv[i]);
  free(kv);
  return rc;
}

void compat_open_free(CompatOpen *o) {
  free(o->path);
  free(o->fname);
  free(o->shared);
  free(o->vfs_own);
  sqlite3_free(o->err);
  memset(o, 0, sizeof *o);
}

/* ---------------------------------------------------------------- ATTACH */

/* What an attached database keeps: its filename object and its shared
 * memdb reference (NULL: none). */
typedef struct AttachCookie {
  char *fname;
  char *shared;
} AttachCookie;

static void attach_release(void *c) {
  AttachCookie *a = c;
  if (a->shared) compat_shared_unref(a->shared);
  free(a->shared);
  free(a->fname);
  free(a);
}

static char *sdup(const char *z) { /* shale_malloc'ed copy */
  size_t n = strlen(z) + 1;
  char *p = shale_malloc(n);
  if (p) memcpy(p, z, n);
  return p;
}

/* The ATTACH resolver: the argument goes through the same parse as an open
 * with the connection's open flags (arg), as SQLite's ATTACH does. */
static int attach_resolve(void *arg, const char *file, shale_attach_target *t) {
  CompatOpen o;
  int rc = compat_open_parse(file, (int)(intptr_t)arg, NULL, &o);
  AttachCookie *a = rc ? NULL : calloc(1, sizeof *a);
  if (rc) {
    t->errmsg = o.err ? sdup(o.err) : NULL;
  } else if (!a || !(t->path = sdup(o.path)) || (o.vfs && !(t->vfs = sdup(o.vfs)))) {
    rc = SQLITE_NOMEM;
    free(a);
  } else {
    t->flags = o.flags & (SQLITE_OPEN_READONLY | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                          SQLITE_OPEN_MEMORY | SHALE_OPEN_NOLOCK | SHALE_OPEN_IMMUTABLE);
    /* an application's VFS opening the file sees the URI's parameters
     * (vfs_app.c invariant 5: only its main-file open of this path takes them) */
    if (o.fname) compat_vfs_app_pending(o.fname + 4);
    a->fname = o.fname;
    a->shared = o.shared;
    o.fname = o.shared = NULL;
    t->cookie = a;
    t->release = attach_release;
  }
  if (o.shared) compat_shared_unref(o.shared);
  compat_open_free(&o);
  return rc;
}

void compat_attach_install(shale *db, int flags) {
  shale_attach_resolver(db, attach_resolve, (void *)(intptr_t)flags);
}

const char *compat_attach_fname(shale *db, const char *zdb) {
  AttachCookie *a = shale_db_attach_cookie(db, zdb);
  return a && a->fname ? a->fname + 4 : NULL;
}
