"""What the tests share: helpers, context managers and fixtures, one module per subject
(`from support.server import call`; pytest puts tests/ on sys.path). Test modules import
from here, never from one another; the GNS3 lab and scripted model fixtures are the
package's pytest plugin (jupyter_gns3_copilot/testing/pytest_plugin.py)."""
