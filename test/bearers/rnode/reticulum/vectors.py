# Produces the Python-made fixtures pasted into test/bearers/rnode/reticulum/*.test.ts.
#
# It runs the reference Python implementations (Reticulum 1.4.2 and LXMF 1.0.1), which are
# NOT in this repository and are not needed to run the tests: the hex it prints already lives
# in the test files. To run it again, point PYTHONPATH at the two source trees:
#
#   PYTHONPATH=<reticulum source>:<lxmf source> /usr/bin/python3 test/bearers/rnode/reticulum/vectors.py
#
# With --check it instead reads, on stdin, JSON our code made (A sending to B: opportunistic
# packets, announces, a proof) and has Reticulum and LXMF decrypt, unpack and validate them.
#
# Keys, timestamps, random hashes and tickets are fixed; Ed25519 is deterministic, so every
# value is stable except the ciphertexts (Reticulum picks a fresh ephemeral key and IV each
# time): those fixtures only need to decrypt, so any run's output will do.

import json
import sys
import RNS
import LXMF
from LXMF.LXMessage import LXMessage

A_PRV = bytes(range(0, 64))      # our test identity: X25519 private 00..1f, Ed25519 seed 20..3f
B_PRV = bytes(range(64, 128))    # the peer: X25519 private 40..5f, Ed25519 seed 60..7f
RATCHET_PRV = bytes([0x11] * 32) # a ratchet private key for A's delivery destination

def check_ours(ours):
    """--check: reads JSON made by our code (A sending to B) from stdin and has Reticulum and
    LXMF judge it: B decrypts and unpacks the packets, the announces validate, the proof
    validates against A's key. Prints one line per check."""
    a = RNS.Identity.from_bytes(A_PRV)
    b = RNS.Identity.from_bytes(B_PRV)
    def unpack(raw):
        p = RNS.Packet(None, bytes.fromhex(raw)); assert p.unpack(); return p
    for key, ratchets in (("packet", None), ("packet_ratchet", [bytes([0x22] * 32)]), ("big", None), ("stamped", None)):
        p = unpack(ours[key])
        plain = b.decrypt(p.data, ratchets=ratchets)
        m = LXMessage.unpack_from_bytes(p.destination_hash + plain)
        signed = p.destination_hash + m.source_hash + RNS.vendor.umsgpack.packb([m.timestamp, m.title, m.content, m.fields]) + m.hash
        print(key, "bytes", len(p.raw), "packet hash", p.packet_hash.hex(), "message hash", m.hash.hex(),
              "content", m.content[:20], "fields", m.fields, "timestamp", m.timestamp, "signature", a.validate(m.signature, signed),
              "stamp valid at cost 8:", m.validate_stamp(8) if m.stamp else None)
    for key in ("announce", "announce_ratchet"):
        p = unpack(ours[key])
        app = p.data[148 + (32 if p.context_flag else 0):]
        print(key, "signature valid:", RNS.Identity.validate_announce(p, only_validate_signature=True),
              "destination:", p.destination_hash == RNS.Destination.hash(a, "lxmf", "delivery"),
              "name:", LXMF.display_name_from_app_data(app), "stamp cost:", LXMF.stamp_cost_from_app_data(app),
              "compression:", LXMF.compression_support_from_app_data(app))
    proof = unpack(ours["proof"])
    print("proof addressed to the packet:", proof.destination_hash.hex() == ours["packet_hash"][:32],
          "signature:", a.validate(proof.data, bytes.fromhex(ours["packet_hash"])))

if "--check" in sys.argv:
    check_ours(json.load(sys.stdin))
    sys.exit(0)

out = {}
a = RNS.Identity.from_bytes(A_PRV)
b = RNS.Identity.from_bytes(B_PRV)
out["a_public"] = a.get_public_key().hex()
out["a_hash"] = a.hash.hex()
out["b_public"] = b.get_public_key().hex()
out["b_hash"] = b.hash.hex()

da = RNS.Destination(a, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")
db = RNS.Destination(b, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")
out["lxmf_name_hash"] = da.name_hash.hex()
out["a_delivery"] = da.hash.hex()
out["b_delivery"] = db.hash.hex()
out["ratchet_public"] = RNS.Identity._ratchet_public_bytes(RATCHET_PRV).hex()
out["ratchet_id"] = RNS.Identity._get_ratchet_id(RNS.Identity._ratchet_public_bytes(RATCHET_PRV)).hex()
out["sign_a"] = a.sign(b"fieldbridge").hex()

# Announces built the way Destination.announce() builds them, with a fixed random hash and
# the app data LXMRouter.get_announce_app_data() makes (display name, no stamp cost, [SF_COMPRESSION]).
class Fake:  # a stand-in destination: Packet.pack() only reads .hash and .type
    def __init__(self, h): self.hash = h; self.type = RNS.Destination.SINGLE

app_data = RNS.vendor.umsgpack.packb([b"Peer B", None, [LXMF.SF_COMPRESSION]])
random_hash = bytes.fromhex("0102030405") + (1700000000).to_bytes(5, "big")
for name, ratchet in (("announce_b", b""), ("announce_b_ratchet", RNS.Identity._ratchet_public_bytes(bytes([0x22] * 32)))):
    signed = db.hash + b.get_public_key() + db.name_hash + random_hash + ratchet + app_data
    data = b.get_public_key() + db.name_hash + random_hash + ratchet + b.sign(signed) + app_data
    p = RNS.Packet(Fake(db.hash), data, RNS.Packet.ANNOUNCE, context_flag=RNS.Packet.FLAG_SET if ratchet else RNS.Packet.FLAG_UNSET)
    p.pack()
    assert RNS.Identity.validate_announce(p, only_validate_signature=True)
    out[name] = p.raw.hex()
    out[name + "_hash"] = p.packet_hash.hex()
out["announce_b_app_data"] = app_data.hex()
out["legacy_app_data_name"] = LXMF.display_name_from_app_data(b"Old Node")

# Tokens: B encrypts for A's identity key, and for A's ratchet (Identity.encrypt).
out["token_for_a"] = a.encrypt(b"hello from reticulum").hex()
out["token_for_a_ratchet"] = a.encrypt(b"hello via ratchet", ratchet=RNS.Identity._ratchet_public_bytes(RATCHET_PRV)).hex()

# An LXMF message from B to A, packed by LXMessage.pack() with a fixed timestamp.
lxm = LXMessage(da, db, "Hello from B", "Greeting", fields={LXMF.FIELD_RENDERER: LXMF.RENDERER_MARKDOWN}, desired_method=LXMessage.OPPORTUNISTIC)
lxm.timestamp = 1700000000.5
lxm.pack()
out["lxm_packed"] = lxm.packed.hex()
out["lxm_hash"] = lxm.hash.hex()

# The same with a stamp: an outbound ticket makes get_stamp() a hash instead of work.
lxs = LXMessage(da, db, "Stamped", "", desired_method=LXMessage.OPPORTUNISTIC)
lxs.timestamp = 1700000001.25
lxs.defer_stamp = False
lxs.outbound_ticket = bytes([0x33] * 16)
lxs.pack()
out["lxm_stamped_packed"] = lxs.packed.hex()
out["lxm_stamped_hash"] = lxs.hash.hex()
out["lxm_stamped_stamp"] = lxs.stamp.hex()

# The whole opportunistic packet as LXMessage.__as_packet() sends it: a DATA packet to A's
# delivery destination whose plaintext is the packed message without its destination hash.
class FakeEnc(Fake):
    def encrypt(self, plaintext): return a.encrypt(plaintext)
pk = RNS.Packet(FakeEnc(da.hash), lxm.packed[16:])
pk.pack()
out["lxm_packet"] = pk.raw.hex()
out["lxm_packet_hash"] = pk.packet_hash.hex()

# Proofs A makes for that packet (Identity.prove): implicit (signature) and explicit (hash + signature).
for name, implicit in (("proof_implicit", True), ("proof_explicit", False)):
    sig = a.sign(pk.packet_hash)
    pp = RNS.Packet(pk.generate_proof_destination(), sig if implicit else pk.packet_hash + sig, RNS.Packet.PROOF)
    pp.pack()
    out[name] = pp.raw.hex()

# Stamps (LXStamper): the workblock for the first message's id, and the first stamp of the form
# SHA-256(n as 4 big-endian bytes) that meets cost 8.
import hashlib
import LXMF.LXStamper as LXStamper
wb = LXStamper.stamp_workblock(lxm.hash)
out["stamp_workblock_len"] = len(wb)
out["stamp_workblock_sha256"] = hashlib.sha256(wb).hexdigest()
n = 0
while not LXStamper.stamp_valid(RNS.Identity.full_hash(n.to_bytes(4, "big")), 8, wb): n += 1
out["stamp_cost8_n"] = n
out["stamp_cost8"] = RNS.Identity.full_hash(n.to_bytes(4, "big")).hex()
out["stamp_cost8_value"] = LXStamper.stamp_value(wb, RNS.Identity.full_hash(n.to_bytes(4, "big")))

# Size limits: content lengths at the edge of one packet.
for n in (287, 288, 295):
    m = LXMessage(da, db, "x" * n, "", desired_method=LXMessage.OPPORTUNISTIC)
    m.timestamp = 1700000000.0
    m.pack()
    q = RNS.Packet(FakeEnc(da.hash), m.packed[16:])
    q.pack()
    out[f"size_{n}"] = {"plaintext": len(m.packed) - 16, "packet": len(q.raw), "method": m.method}

print(json.dumps(out, indent=1))
