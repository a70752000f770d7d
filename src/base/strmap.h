/*
 * strmap.h -- a hash map from byte strings to 64-bit values (open
 * addressing).  Keys are not copied: they must outlive the map.  Used for
 * duplicate detection in the GGUF reader and for vocabulary lookups.
 */
#ifndef PL_STRMAP_H
#define PL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pl_strmap_slot {
    const char *key;
    size_t len;
    uint64_t value;
} pl_strmap_slot;

typedef struct pl_strmap {
    pl_strmap_slot *slots;
    size_t cap;    /* power of two */
    size_t count;
} pl_strmap;

/* Room for at least n keys without growing; false on allocation failure. */
bool pl_strmap_init(pl_strmap *m, size_t n);
void pl_strmap_free(pl_strmap *m);

uint64_t pl_hash_bytes(const void *data, size_t len);

/* Insert key -> value.  Returns 1 when inserted, 0 when the key was already
 * present (its value is stored in *existing if not NULL, map unchanged),
 * -1 on allocation failure. */
int pl_strmap_put(pl_strmap *m, const char *key, size_t len, uint64_t value, uint64_t *existing);
/* Look a key up; false when absent. */
bool pl_strmap_get(const pl_strmap *m, const char *key, size_t len, uint64_t *value);

#endif
