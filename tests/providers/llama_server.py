"""`python -m llama_cpp.server`, with the model loaded as loomdb loads its own: without
llama.cpp's extra CPU buffer types (their AMX kernels crash on CPUs that have AMX; see
`loomdb.providers.local.without_extra_buffer_types`). Arguments as llama_cpp.server's."""

import runpy

import llama_cpp

from loomdb.providers.local import without_extra_buffer_types

without_extra_buffer_types(llama_cpp)
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
