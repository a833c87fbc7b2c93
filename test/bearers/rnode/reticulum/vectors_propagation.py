# Produces the Python-made propagation fixtures in test/bearers/rnode/reticulum/propagation-fixtures.ts,
# and with --check judges what our code makes (JSON on stdin).
#
# It runs the reference Python implementations (Reticulum 1.4.2, LXMF 1.0.1), which are NOT in
# this repository and are not needed to run the tests. To run it again:
#
#   PYTHONPATH=<reticulum source>:<lxmf source> /usr/bin/python3 test/bearers/rnode/reticulum/vectors_propagation.py
#
# Identity A (00 01 .. 3f) is the bridge, B (40 .. 7f) a peer. B leaves a message for A on a
# propagation node: its lxmf data (encrypted to A, so only decryption is checked) and a
# propagation stamp Python made at cost 8. A node's announce app data comes from
# LXMRouter.get_propagation_node_app_data run on a stand-in with the node's settings.

import json
import sys
import RNS
import LXMF
from LXMF import LXStamper
from LXMF.LXMessage import LXMessage
from LXMF.LXMRouter import LXMRouter
from RNS.vendor import umsgpack

A_PRV = bytes(range(0, 64))
B_PRV = bytes(range(64, 128))
a = RNS.Identity.from_bytes(A_PRV)
b = RNS.Identity.from_bytes(B_PRV)
a_delivery = RNS.Destination(a, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")
b_delivery = RNS.Destination(b, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")

if len(sys.argv) > 1 and sys.argv[1] == "--check":
    ours = json.loads(sys.stdin.read())
    # Our request plaintext: what Link.handle_request unpacks.
    req = umsgpack.unpackb(bytes.fromhex(ours["request"]))
    print("request path hash is /get:", req[1] == RNS.Identity.truncated_hash("/get".encode("utf-8")), "time", req[0], "data", req[2])
    # Our container for the node: what LXMRouter.propagation_packet reads, stamps validated as it does.
    container = umsgpack.unpackb(bytes.fromhex(ours["container"]))
    valid = LXStamper.validate_pn_stamps(container[1], ours["cost"])
    print("container messages", len(container[1]), "valid stamps", len(valid), "time", container[0])
    lxmf_data = valid[0][1]
    plain = b.decrypt(lxmf_data[16:])
    m = LXMessage.unpack_from_bytes(lxmf_data[:16] + plain)
    print("to B:", lxmf_data[:16] == b_delivery.hash, "content", m.content, "signature", a.validate(m.signature, m.hash and (lxmf_data[:16] + m.source_hash + umsgpack.packb([m.timestamp, m.title, m.content, m.fields]) + m.hash)))
    sys.exit(0)

out = {}
out["get_path_hash"] = RNS.Identity.truncated_hash("/get".encode("utf-8")).hex()
out["request_list"] = umsgpack.packb([1700000000.5, RNS.Identity.truncated_hash("/get".encode("utf-8")), [None, None]]).hex()
ids = [bytes([i]) * 32 for i in (1, 2)]
out["response_list"] = umsgpack.packb([bytes(range(16)), ids]).hex()
out["response_error"] = umsgpack.packb([bytes(range(16)), 0xf0]).hex()

class Node: pass
node = Node()
node.name = "Hut node"
node.propagation_node = True
node.from_static_only = False
node.propagation_stamp_cost = 16
node.propagation_stamp_cost_flexibility = 3
node.peering_cost = 18
node.propagation_per_transfer_limit = 256
node.propagation_per_sync_limit = 10240
node.get_propagation_node_announce_metadata = lambda: LXMRouter.get_propagation_node_announce_metadata(node)
app = LXMRouter.get_propagation_node_app_data(node)
assert LXMF.pn_announce_data_is_valid(app)
out["pn_app_data"] = app.hex()
out["pn_stamp_cost"] = LXMF.pn_stamp_cost_from_app_data(app)
out["pn_name"] = LXMF.pn_name_from_app_data(app)

lxm = LXMessage(a_delivery, RNS.Destination(b, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery"), "left for you", "", desired_method=LXMessage.PROPAGATED)
lxm.timestamp = 1700000000.0
lxm.pack()
lxmf_data = umsgpack.unpackb(lxm.propagation_packed)[1][0]
out["lxmf_data_to_a"] = lxmf_data.hex()
out["transient_id"] = lxm.transient_id.hex()
out["message_hash"] = lxm.hash.hex()
stamp, value = LXStamper.generate_stamp(lxm.transient_id, 8, expand_rounds=LXStamper.WORKBLOCK_EXPAND_ROUNDS_PN)
out["pn_stamp_cost_8"] = stamp.hex()
out["pn_stamp_value"] = value
assert LXStamper.validate_pn_stamp(lxmf_data + stamp, 8)[0] == lxm.transient_id
out["response_get"] = umsgpack.packb([bytes(range(16)), [lxmf_data]]).hex()
print(json.dumps(out, indent=2))
