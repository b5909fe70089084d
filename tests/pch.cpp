// Compiled only to build the precompiled header the tests share.
