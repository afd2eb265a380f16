// A function whose signature the optimizer must keep as written (no argument dropped, no clone specialised for its
// callers), so that a chain of tail calls passes its arguments along in the registers they came in. GCC says so with
// noipa; Clang (the wheel's compiler) has no such attribute and changes the signature only of a function it may
// inline, so noinline says as much there.
#pragma once

#if defined(__clang__)
#define FIRSTASSERT_NO_IPA __attribute__((noinline))
#else
#define FIRSTASSERT_NO_IPA __attribute__((noipa))
#endif
