"""Stand-ins for the GNS3 helper programs that no package registry ships.

gns3-server drives two helper programs over a line-based TCP "hypervisor" protocol:
uBridge (UDP bridging and packet capture for VPCS and other nodes) and Dynamips (here
only its Ethernet switch and hub). These modules implement just enough of both, written
from the protocol description, so a stock gns3-server can run VPCS labs on one machine.

Everything in this package uses the standard library only and binds to 127.0.0.1 only.
What is not emulated: Dynamips routers (no IOS images), uBridge links to host interfaces
(Cloud/NAT) and link filters other than ``frequency_drop`` (used by link suspend).
"""
