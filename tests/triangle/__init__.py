"""The tests on one shared routed triangle of real FRR routers (conftest.py): a package,
so that its `triangle` is deleted, and its routers stopped, once its last test is done."""
