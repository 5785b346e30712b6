#ifndef CTSDB_CRC32C_H
#define CTSDB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Nonzero when this CPU has the CRC-32C instruction (x86-64 SSE4.2, Arm CRC): Swift cannot
/// reach it, and it checks a segment's bytes several times faster than table lookups.
int ctsdb_crc32c_hardware(void);

/// Extends the CRC-32C register `state` (not inverted) over `count` bytes with the instruction.
/// Call only when ctsdb_crc32c_hardware() is nonzero; returns `state` unchanged otherwise.
uint32_t ctsdb_crc32c_extend(uint32_t state, const void *bytes, size_t count);

#endif
