// How gantry's functions are compiled. Header-only by default: every function is defined in its
// header, inline. With GANTRY_SEPARATE_COMPILATION defined in every translation unit of a program,
// the functions marked GANTRY_DECL are only declared where they are used, and the program compiles
// each of their definitions once, in a source file of its own (as Asio and {fmt} offer):
// gantry/compiled.hpp says what that compiles (the placer registry's families, the graph file's
// reader and writer, and, declared beside each algorithm with extern template, the default
// instances of place/instances.hpp). The README ("Using it from CMake or pkg-config") shows how.
#pragma once

#if defined(GANTRY_SEPARATE_COMPILATION)
#define GANTRY_DECL
#else
#define GANTRY_DECL inline
#endif
