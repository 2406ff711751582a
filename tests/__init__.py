"""The test suite. Every folder is a package, so that test modules are named by
their path (tests.gpu.test_louvain_kernels) and helpers import as
``tests.support``. The folders mirror the package's parts: a problem's folder
(community/, matching/, bipartite/, stable_marriage/) holds its front end and
CPU engine; gpu/ holds the GPU engine and kernels of every problem, distributed/
the MPI engine, api/ what all problems share (networkx contract, Graph, files,
command line, bad input, first use)."""
