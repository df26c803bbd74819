"""Test helpers shipped with the package, for this project's tests and for users'.

``pytest_plugin`` (registered as a ``pytest11`` entry point) provides the ``gns3_lab``,
``gns3_http`` and ``gns3_project`` fixtures: a real local GNS3 lab for the whole test
run and a fresh project per test. The other modules are test doubles, each labelled as
such in its docstring.
"""
