// Fixtures made by the reference Python implementations (Reticulum 1.4.2, LXMF 1.0.1) with
// test/bearers/rnode/reticulum/vectors.py, which says how to run it again; the sources are not needed
// to run the tests. Identity A (ours) has private key 00 01 .. 3f, identity B (the peer)
// 40 41 .. 7f. Signatures are deterministic (Ed25519); the ciphertexts came from one run.

export const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
export const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export const A_PRIVATE = hex('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f');
export const B_PRIVATE = hex('404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f');
/** The ratchet private key A's tokens were encrypted to (32 bytes of 0x11). */
export const RATCHET_PRIVATE = hex('1111111111111111111111111111111111111111111111111111111111111111');

// announce_b and announce_b_ratchet: B's lxmf.delivery announce, random hash 01 02 03 04 05
// then 1700000000 as 5 bytes, app data [b"Peer B", None, [0]]; the second one carries the
// ratchet public key of private key 32 bytes of 0x22. lxm_*: B to A, see vectors.py.
export const PY = {
  a_public: "8f40c5adb68f25624ae5b214ea767a6ec94d829d3d7b5e1ad1ba6f3e2138285f29acbae141bccaf0b22e1a94d34d0bc7361e526d0bfe12c89794bc9322966dd7",
  a_hash: "aca31af0441d81dbec71e82da0b4b5f5",
  b_public: "79a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a174553b456dddfc6908ecab1c101fe6ab21e2baa0617795b7d43a63482993fd5",
  b_hash: "069092a03c194639207219dd05f9c840",
  lxmf_name_hash: "6ec60bc318e2c0f0d908",
  a_delivery: "fae321c442e3c9bdcd7a3e79d850e03c",
  b_delivery: "cf0b2a4a8d2a0b6978b71290da7cc80e",
  ratchet_public: "7b4e909bbe7ffe44c465a220037d608ee35897d31ef972f07f74892cb0f73f13",
  ratchet_id: "d19bf3f082782c87b783",
  sign_a: "f5ec2da8f7a0af7cd7ac22fca2c222369bf566827af307eb7a777e3771b101b277598cfc104e9f7514818a5c3396f8af96c3dee3e4e76a4d7ea1fdbce83b0d09",
  announce_b: "0100cf0b2a4a8d2a0b6978b71290da7cc80e0079a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a174553b456dddfc6908ecab1c101fe6ab21e2baa0617795b7d43a63482993fd56ec60bc318e2c0f0d9080102030405006553f1008327b9144a22e98edc7489d5fed848a38e0f857d4cf6a6c216fe9cbebe28184c4718be8c4cc7a99d7c5b60867e5e0aa789494f31b9ee0ea9d6151ba2f8d53d0d93c406506565722042c09100",
  announce_b_hash: "1abde877be4acbaa1b688dc51e77e86ae6c5726a45f56179b5abd6aeccc46d20",
  announce_b_ratchet: "2100cf0b2a4a8d2a0b6978b71290da7cc80e0079a631eede1bf9c98f12032cdeadd0e7a079398fc786b88cc846ec89af85a51a174553b456dddfc6908ecab1c101fe6ab21e2baa0617795b7d43a63482993fd56ec60bc318e2c0f0d9080102030405006553f1000faa684ed28867b97f4a6a2dee5df8ce974e76b7018e3f22a1c4cf2678570f20150e2aa89dd3d35e45ddbf257b09122799e47ea7d40afb06ab36bd41c71357a34b64bbabfd640caf39a876df36b9c35c5224e4dd24156f8bc5c79d51b9c7530e93c406506565722042c09100",
  announce_b_ratchet_hash: "707c55497d80784cfeeba30e2e4db0d61d48fa536b1509ec95b7b4acb646f3dc",
  announce_b_app_data: "93c406506565722042c09100",
  legacy_app_data_name: "Old Node",
  token_for_a: "0d393be0267875355d536941db30e7e96a4dbb8747c7406e4c0031b77a35b155d07e5734c23705e9e02721ede8ec570cd2597a8420c938b1aec0d076eeac088aa319b9c5bf557f0a5df194b7af527a2459c6cc9730ea3506890f7fc008aa059361bc0c5f018b916f50dfe269171007ec",
  token_for_a_ratchet: "c51bf4c532a26f697745eb36bfb8aed0a08cff728e65a68823ba72e9ddc4397f693ffd52e174b66ef1ffecc5bc78c4cd19571bef13d5ccdf1a9bd4a296dadc3bb5f4c457753345451ace930a944c1c76a505567da49b4591d3d36ee513de04277acc10ed18e25496c669cc0cb1b82e7a",
  lxm_packed: "fae321c442e3c9bdcd7a3e79d850e03ccf0b2a4a8d2a0b6978b71290da7cc80e1411e29d340f7083cca8e1eefc9f4c3ce0df07d175db33d427ce2a862a3c4c36dfaf41784985aaedef9a9a1a8d9abce87740f159de8ee651b25e67cecebd5a0c94cb41d954fc40200000c4084772656574696e67c40c48656c6c6f2066726f6d2042810f02",
  lxm_hash: "dc354e71de4cce7d06d9e6fb64983e4b011ffb1a176e8329177f25aced34cb0c",
  lxm_stamped_packed: "fae321c442e3c9bdcd7a3e79d850e03ccf0b2a4a8d2a0b6978b71290da7cc80e8b3313013281f0f2de2ac1bf8eb863502d874085278bbd023fe1f260fa97350f3dab6b869465cdeacc0d847f4c15f0c00f83279455fd7339332f8ec7de59f40695cb41d954fc40500000c400c4075374616d70656480c4107a421e7cde5a26932e03864dcebcddee",
  lxm_stamped_hash: "3ba1926b43de66e0b76c0bd5929a2a264e3a777cc1d390b94e81dcd4dbdb293c",
  lxm_stamped_stamp: "7a421e7cde5a26932e03864dcebcddee",
  lxm_packet: "0000fae321c442e3c9bdcd7a3e79d850e03c00ba697d888ac07ded3c4a72932b8cf1d621b36770415f8ac745a76e741bf8a270c9dbd609e4a70107929bf9f24cdb93862a7c15e22bbd0e6fcaf87a2eff054d32448cbb5c07f3f754d99a6feeb0fe619db4a6d37a3b5dc637502b30b05d7d546104bc6869dfc51fe3753a1c67d812799a7f9d4b6c340caed110ec672a15256cc8834074876cdd6acceedfc8b0c999486722d9ab23d9d7e662259349a9cb7a1ef8b46711d9ed51cb2adb6b2eff69bf7f1005613a74994c0b97a589ade62dffb64acaea52da0e0f8166ca7765e3c1b1eba2",
  lxm_packet_hash: "0f38a3c268c7c88f5ade91e70b2c2051950a3aca83dc88bb5dfe46cde67af725",
  proof_implicit: "03000f38a3c268c7c88f5ade91e70b2c2051007d398b78d9dd09e0d54027a1d901215973b1e324d47836683e843d87ea5d9459a6fd920d4148803cc564205744857b8fa6613402ade975cb0cb8ef30870f5a06",
  proof_explicit: "03000f38a3c268c7c88f5ade91e70b2c2051000f38a3c268c7c88f5ade91e70b2c2051950a3aca83dc88bb5dfe46cde67af7257d398b78d9dd09e0d54027a1d901215973b1e324d47836683e843d87ea5d9459a6fd920d4148803cc564205744857b8fa6613402ade975cb0cb8ef30870f5a06",
  // Stamps for lxm_hash (LXStamper): workblock digest and the first counter stamp meeting cost 8.
  stamp_workblock_len: 768000,
  stamp_workblock_sha256: "6caee8381e202bc351686825c965817b8dd9180db48948444a7f64dc45ef28e4",
  stamp_cost8_n: 254,
  stamp_cost8: "71557d1c8bac9bbe3cbec8d00bb223a2f372279827064095447e569fbf5a760a",
  stamp_cost8_value: 8,
} as const;

/** Packet sizes LXMF and Reticulum produce for content of n bytes (empty title, no fields). */
export const PY_SIZES = {"287": {"plaintext": 383, "packet": 483, "method": 1}, "288": {"plaintext": 384, "packet": 499, "method": 1}, "295": {"plaintext": 391, "packet": 499, "method": 1}} as const;
