// How gantry's functions are compiled. Header-only by default: every function is defined in its
// header, inline. With GANTRY_SEPARATE_COMPILATION defined in every translation unit of a program,
// the functions marked GANTRY_DECL are only declared where they are used, and the program compiles
// each of their definitions once, in a source file of its own (as Asio and {fmt} offer). So far the
// placer registry (place/placers.hpp) offers this: its families of placers are the costly
// instantiations of a program that names placers at run time; place/placers.hpp and the README
// ("Using it from CMake or pkg-config") say which headers to compile.
#pragma once

#if defined(GANTRY_SEPARATE_COMPILATION)
#define GANTRY_DECL
#else
#define GANTRY_DECL inline
#endif
