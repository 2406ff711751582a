"""CUDA C sources of the GPU engine (package data: nx_gpumatch.kernels)."""
