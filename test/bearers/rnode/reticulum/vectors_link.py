# Produces the Python-made link and resource fixtures in test/bearers/rnode/reticulum/link-fixtures.ts.
#
# It runs the reference Python implementations (Reticulum 1.4.2), which are NOT in this
# repository and are not needed to run the tests. To run it again:
#
#   PYTHONPATH=<reticulum source> /usr/bin/python3 test/bearers/rnode/reticulum/vectors_link.py
#
# Identity A (00 01 .. 3f, the destination) is asked for a link by B's link keys: X25519 private
# 0x33 * 32 and Ed25519 seed 0x44 * 32; A's link X25519 private is 0x55 * 32. Ed25519 is
# deterministic, so the requests, proofs and advertisements are stable; tokens (random IVs) are
# not, and only need to decrypt.

import json
import RNS
from RNS.Cryptography import X25519PrivateKey, Ed25519PrivateKey
from RNS.vendor import umsgpack

A_PRV = bytes(range(0, 64))
a = RNS.Identity.from_bytes(A_PRV)
dest = RNS.Destination(a, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")
out = {}

b_x = X25519PrivateKey.from_private_bytes(bytes([0x33] * 32))
b_ed = Ed25519PrivateKey.from_private_bytes(bytes([0x44] * 32))
b_pub = b_x.public_key().public_bytes() + b_ed.public_key().public_bytes()
signalling = RNS.Link.signalling_bytes(500, RNS.Link.MODE_AES256_CBC)
req = RNS.Packet(dest, b_pub + signalling, packet_type=RNS.Packet.LINKREQUEST)
req.pack()
link_id = RNS.Link.link_id_from_lr_packet(req)
out["link_request"] = req.raw.hex()
out["link_id"] = link_id.hex()
out["signalling_500"] = signalling.hex()

# A answers as Link.validate_request / Link.prove do, with a fixed link key.
link = RNS.Link(owner=type("Owner", (), {"identity": a})(), peer_pub_bytes=b_pub[:32], peer_sig_pub_bytes=b_pub[32:])
link.prv = X25519PrivateKey.from_private_bytes(bytes([0x55] * 32))
link.pub = link.prv.public_key()
link.pub_bytes = link.pub.public_bytes()
link.set_link_id(req)
link.handshake()
out["derived_key"] = link.derived_key.hex()
signed = link.link_id + link.pub_bytes + link.sig_pub_bytes + signalling
proof = RNS.Packet(link, a.sign(signed) + link.pub_bytes + signalling, packet_type=RNS.Packet.PROOF, context=RNS.Packet.LRPROOF)
proof.pack()
out["link_proof"] = proof.raw.hex()

# Link packets the initiator (B) would send: an RTT report and a LINKIDENTIFY of identity A.
out["rtt_plaintext"] = umsgpack.packb(0.25).hex()
rtt = RNS.Packet(link, umsgpack.packb(0.25), context=RNS.Packet.LRRTT)
rtt.pack()
out["rtt_packet"] = rtt.raw.hex()
ident = a.get_public_key() + a.sign(link.link_id + a.get_public_key())
out["identify_plaintext"] = ident.hex()
data = RNS.Packet(link, b"hello over a link")
data.pack()
out["data_packet"] = data.raw.hex()
out["keepalive_packet"] = (lambda p: (p.pack(), p.raw.hex())[1])(RNS.Packet(link, bytes([0xFF]), context=RNS.Packet.KEEPALIVE))
# A proves B's data packet (Link.prove_packet signs with A's identity key on this side).
out["data_packet_hash"] = data.packet_hash.hex()
out["data_proof"] = (lambda p: (p.pack(), p.raw.hex())[1])(RNS.Packet(link, data.packet_hash + a.sign(data.packet_hash), RNS.Packet.PROOF))

# A resource advertisement and request as ResourceAdvertisement.pack / Resource.request_next make them.
adv = RNS.ResourceAdvertisement()
adv.t, adv.d, adv.n = 5168, 5115, 12
adv.h = bytes(range(32)); adv.r = bytes([1, 2, 3, 4]); adv.o = bytes(range(32))
adv.m = bytes(range(48)); adv.c = False; adv.e = True; adv.s = False; adv.x = False
adv.i, adv.l, adv.q, adv.u, adv.p = 1, 1, None, False, False
adv.f = 0x00 | adv.x << 5 | adv.p << 4 | adv.u << 3 | adv.s << 2 | adv.c << 1 | adv.e
out["advertisement"] = adv.pack().hex()
out["request"] = (bytes([RNS.Resource.HASHMAP_IS_NOT_EXHAUSTED]) + adv.h + adv.m[0:16]).hex()
out["map_hash_of_abc"] = RNS.Identity.full_hash(b"abc" + adv.r)[:RNS.Resource.MAPHASH_LEN].hex()
out["resource_proof_of_hello"] = (adv.h + RNS.Identity.full_hash(b"hello" + adv.h)).hex()
out["hashmap_max_len"] = RNS.ResourceAdvertisement.HASHMAP_MAX_LEN
out["link_mdu"] = RNS.Link.MDU

print(json.dumps(out, indent=1))
