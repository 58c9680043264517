"""Language-model runtime: the embedded llama.cpp engine and model resolution."""
