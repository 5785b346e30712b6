#include "ctsdb_crc32c.h"

#include <string.h>

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) static uint32_t extend(uint32_t state, const unsigned char *p, size_t n) {
    uint64_t crc = state;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);  // unaligned load; the instruction takes little-endian words
        crc = __builtin_ia32_crc32di(crc, word);
    }
    uint32_t c = (uint32_t)crc;
    for (; n > 0; p++, n--) c = __builtin_ia32_crc32qi(c, *p);
    return c;
}

int ctsdb_crc32c_hardware(void) { return __builtin_cpu_supports("sse4.2"); }

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)

static uint32_t extend(uint32_t state, const unsigned char *p, size_t n) {
    uint32_t c = state;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_arm_crc32cd(c, word);
    }
    for (; n > 0; p++, n--) c = __builtin_arm_crc32cb(c, *p);
    return c;
}

int ctsdb_crc32c_hardware(void) { return 1; }

#else

static uint32_t extend(uint32_t state, const unsigned char *p, size_t n) {
    (void)p;
    (void)n;
    return state;
}

int ctsdb_crc32c_hardware(void) { return 0; }

#endif

uint32_t ctsdb_crc32c_extend(uint32_t state, const void *bytes, size_t count) {
    if (!ctsdb_crc32c_hardware()) return state;
    return extend(state, (const unsigned char *)bytes, count);
}
