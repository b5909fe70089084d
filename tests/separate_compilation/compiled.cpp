// The compiled part of the program in main.cpp (gantry/compiled.hpp).
#include <gantry/compiled.hpp>
