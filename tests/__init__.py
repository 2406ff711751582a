"""The test suite. Every folder is a package, so that test modules are named by
their path (tests.gpu.test_louvain_kernels) and helpers import as
``tests.support``; the folders mirror the package's parts."""
