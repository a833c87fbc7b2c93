#!/usr/bin/python3
# A scripted LXMF endpoint for tests: the real Reticulum (RNS) and LXMF code, reaching the air
# through an RNodeInterface on a networked RNode (a simulated one of ours, served over TCP).
#
# RNS and LXMF are not bundled: they are imported from source folders put on PYTHONPATH by the
# caller (test/helpers/lxmf-peer.ts; docs/reticulum.md "Testing against Reticulum and LXMF").
#
# Protocol: one JSON object per line. Commands on stdin:
#   {"cmd":"announce"}
#   {"cmd":"send","to":"<32 hex>","content":"...","title":"...","ref":"<any>","fields":{"<int>":v},"method":"direct"}
#   {"cmd":"request_path","to":"<32 hex>","timeout":15}
#   {"cmd":"teardown_links"}
#   {"cmd":"set_propagation_node","to":"<32 hex>"}
#   {"cmd":"sync","timeout":60}
#   {"cmd":"quit"}
# Events on stdout (Reticulum's own log goes to stderr):
#   ready, announced, announce, path, links_closed, propagation_node_set, synced, sending,
#   delivery, message, error, bye.
# With --propagation-cost the peer also runs an LXMF propagation node (LXMRouter.enable_propagation)
# and "ready" names its lxmf.propagation address.
# See test/peers/reticulum/README.md for every field.

import argparse
import json
import os
import sys
import threading
import time

# Events go to a private copy of stdout; fd 1 itself then points at stderr, so anything RNS or
# LXMF prints (logs, warnings) cannot interleave with the JSON lines the harness parses.
_events = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr
_events_lock = threading.Lock()


def emit(event, **fields):
    line = json.dumps({"event": event, **fields}, default=_jsonable)
    with _events_lock:
        _events.write(line + "\n")
        _events.flush()


def _jsonable(value):
    # LXMF fields may carry bytes (and msgpack containers of them): hex is the readable form.
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return repr(value)


def plain(value):
    """A JSON-ready copy of a fields structure: dict keys as strings, bytes as hex."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


try:
    import RNS
    import LXMF
except ImportError as e:
    emit("error", error="import", message=f"cannot import RNS/LXMF ({e}); set PYTHONPATH to the Reticulum and LXMF source folders")
    sys.exit(2)


# LXMF makes stamps in forked worker processes on Linux (LXStamper.job_linux); forked from this
# script's threads (event writer, delivery tracker, RNS) they never report back, and the message
# waits forever. The peer uses LXMF's own single-process generator instead: the same stamps,
# found on one core (cost 13 takes a few seconds).
LXMF.LXStamper.job_linux = LXMF.LXStamper.job_simple


def parse_args():
    p = argparse.ArgumentParser(description="LXMF test peer on a networked RNode")
    p.add_argument("--rnode-host", required=True, help="host of the networked RNode (RNS always uses TCP port 7633)")
    p.add_argument("--dir", required=True, help="folder for the Reticulum config and LXMF storage")
    p.add_argument("--identity", required=True, help="identity file: loaded if present, else created")
    p.add_argument("--display-name", required=True)
    p.add_argument("--frequency", type=int, default=915000000)
    p.add_argument("--bandwidth", type=int, default=125000)
    p.add_argument("--sf", type=int, default=7)
    p.add_argument("--cr", type=int, default=5)
    p.add_argument("--txpower", type=int, default=22)
    p.add_argument("--loglevel", type=int, default=2, help="RNS log level (2 = warnings) written to stderr")
    p.add_argument("--online-timeout", type=float, default=20.0, help="seconds to wait for the RNode interface")
    p.add_argument("--propagation-cost", type=int, default=None, help="also be a propagation node asking this stamp cost (13 or more)")
    return p.parse_args()


def write_config(args, config_dir):
    # A config of our own each run: no shared instance (no daemon, no sockets of RNS's own), no
    # transport, and exactly one interface, the RNode. RNS accepts "tcp://HOST" as an RNode port
    # and connects to HOST on port 7633 (RNS/Interfaces/RNodeInterface.py, TCPConnection).
    os.makedirs(config_dir, exist_ok=True)
    with open(os.path.join(config_dir, "config"), "w", encoding="utf-8") as f:
        f.write(
            "[reticulum]\n"
            "  enable_transport = No\n"
            "  share_instance = No\n"
            "  panic_on_interface_error = No\n"
            "\n"
            "[logging]\n"
            f"  loglevel = {args.loglevel}\n"
            "\n"
            "[interfaces]\n"
            "  [[Simulated RNode]]\n"
            "    type = RNodeInterface\n"
            "    enabled = Yes\n"
            f"    port = tcp://{args.rnode_host}\n"
            f"    frequency = {args.frequency}\n"
            f"    bandwidth = {args.bandwidth}\n"
            f"    txpower = {args.txpower}\n"
            f"    spreadingfactor = {args.sf}\n"
            f"    codingrate = {args.cr}\n"
        )


def load_identity(path):
    if os.path.isfile(path):
        identity = RNS.Identity.from_file(path)
        if identity is None:
            raise RuntimeError(f"identity file {path} could not be read")
        return identity
    identity = RNS.Identity()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    identity.to_file(path)
    return identity


STATE_NAMES = {
    LXMF.LXMessage.GENERATING: "generating",
    LXMF.LXMessage.OUTBOUND: "outbound",
    LXMF.LXMessage.SENDING: "sending",
    LXMF.LXMessage.SENT: "sent",
    LXMF.LXMessage.DELIVERED: "delivered",
    LXMF.LXMessage.REJECTED: "rejected",
    LXMF.LXMessage.CANCELLED: "cancelled",
    LXMF.LXMessage.FAILED: "failed",
}
FINAL_STATES = {LXMF.LXMessage.DELIVERED, LXMF.LXMessage.REJECTED, LXMF.LXMessage.CANCELLED, LXMF.LXMessage.FAILED}
METHOD_NAMES = {
    LXMF.LXMessage.OPPORTUNISTIC: "opportunistic",
    LXMF.LXMessage.DIRECT: "direct",
    LXMF.LXMessage.PROPAGATED: "propagated",
    LXMF.LXMessage.PAPER: "paper",
}
UNVERIFIED_NAMES = {
    LXMF.LXMessage.SOURCE_UNKNOWN: "source_unknown",
    LXMF.LXMessage.SIGNATURE_INVALID: "signature_invalid",
}


class DeliveryTracker:
    """Reports every state an outgoing LXMessage goes through, once each. LXMF calls back only
    for the final states (delivered, failed); a poll catches outbound -> sent in between."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tracked = {}  # message hash -> [LXMessage, last reported state]
        threading.Thread(target=self.poll, daemon=True).start()

    def track(self, lxm):
        with self.lock:
            self.tracked[lxm.hash] = [lxm, None]
        self.report(lxm)

    def report(self, lxm):
        with self.lock:
            entry = self.tracked.get(lxm.hash)
            if entry is None or entry[1] == lxm.state:
                return
            entry[1] = lxm.state
            if lxm.state in FINAL_STATES:
                del self.tracked[lxm.hash]
            emit("delivery", id=lxm.hash.hex(), to=lxm.destination_hash.hex(), state=STATE_NAMES.get(lxm.state, str(lxm.state)),
                 method=METHOD_NAMES.get(lxm.method), attempts=lxm.delivery_attempts)

    def poll(self):
        while True:
            time.sleep(0.1)
            with self.lock:
                pending = [entry[0] for entry in self.tracked.values()]
            for lxm in pending:
                self.report(lxm)


class LxmfAnnounces:
    """Announce handler (RNS.Transport.register_announce_handler): every lxmf.delivery announce
    heard, including answers to path requests."""

    aspect_filter = "lxmf.delivery"
    receive_path_responses = True

    def received_announce(self, destination_hash, announced_identity, app_data, announce_packet_hash, is_path_response):
        emit("announce", address=destination_hash.hex(), identity_hash=announced_identity.hash.hex(),
             display_name=LXMF.display_name_from_app_data(app_data), stamp_cost=LXMF.stamp_cost_from_app_data(app_data),
             hops=RNS.Transport.hops_to(destination_hash), path_response=bool(is_path_response))


def on_message(message):
    emit("message", id=message.hash.hex() if message.hash else None, **{"from": message.source_hash.hex()}, to=message.destination_hash.hex(),
         title=message.title_as_string(), content=message.content_as_string(), fields=plain(message.fields or {}),
         signature_validated=bool(message.signature_validated), unverified_reason=UNVERIFIED_NAMES.get(message.unverified_reason),
         method=METHOD_NAMES.get(message.method), timestamp=message.timestamp,
         rssi=getattr(message, "rssi", None), snr=getattr(message, "snr", None))


def send(router, source, tracker, cmd):
    ref = cmd.get("ref")
    try:
        to = bytes.fromhex(cmd.get("to", ""))
    except ValueError:
        to = b""
    if len(to) != RNS.Reticulum.TRUNCATED_HASHLENGTH // 8:
        emit("error", error="bad_address", ref=ref, message=f"\"to\" must be {RNS.Reticulum.TRUNCATED_HASHLENGTH // 4} hex digits, got {cmd.get('to')!r}")
        return
    # An opportunistic message is encrypted to the recipient's identity: without an announce
    # from it (or a path response) there is nothing to encrypt to. Say so instead of waiting.
    identity = RNS.Identity.recall(to)
    if identity is None:
        emit("error", error="unknown_destination", ref=ref, to=to.hex(), message="no announce heard from this address yet: its identity is unknown")
        return
    destination = RNS.Destination(identity, RNS.Destination.OUT, RNS.Destination.SINGLE, "lxmf", "delivery")
    fields = {int(k): v for k, v in (cmd.get("fields") or {}).items()}
    # "method": "direct" asks for a link, as Sideband does by default; otherwise opportunistic
    # (LXMF itself moves a message that does not fit one packet to a link).
    method = {"direct": LXMF.LXMessage.DIRECT, "propagated": LXMF.LXMessage.PROPAGATED}.get(cmd.get("method"), LXMF.LXMessage.OPPORTUNISTIC)
    lxm = LXMF.LXMessage(destination, source, cmd.get("content", ""), cmd.get("title", ""), fields=fields or None,
                         desired_method=method)
    lxm.register_delivery_callback(tracker.report)
    lxm.register_failed_callback(tracker.report)
    router.handle_outbound(lxm)  # packs the message, so its hash is known from here on
    # LXMF falls back to a link (DIRECT) when the content does not fit one packet: "method" says which.
    emit("sending", id=lxm.hash.hex(), ref=ref, to=to.hex(), method=METHOD_NAMES.get(lxm.method), size=len(lxm.packed))
    tracker.track(lxm)


def request_path(cmd):
    """Asks the network for a path (RNS.Transport.request_path), as Sideband does for an address
    it has no announce from, and reports whether one arrived within the timeout."""
    ref = cmd.get("ref")
    try:
        to = bytes.fromhex(cmd.get("to", ""))
    except ValueError:
        to = b""
    if len(to) != RNS.Reticulum.TRUNCATED_HASHLENGTH // 8:
        emit("error", error="bad_address", ref=ref, message=f"\"to\" must be {RNS.Reticulum.TRUNCATED_HASHLENGTH // 4} hex digits, got {cmd.get('to')!r}")
        return
    timeout = float(cmd.get("timeout", 15))

    def wait():
        began = time.time()
        RNS.Transport.request_path(to)
        while not RNS.Transport.has_path(to) and time.time() - began < timeout:
            time.sleep(0.05)
        found = RNS.Transport.has_path(to)
        emit("path", ref=ref, to=to.hex(), found=found, hops=RNS.Transport.hops_to(to) if found else None,
             ms=round((time.time() - began) * 1000))

    threading.Thread(target=wait, daemon=True).start()


def sync(router, identity, cmd):
    """Fetches this peer's messages from its propagation node (request_messages_from_propagation_node)
    and reports how it ended."""
    ref = cmd.get("ref")
    timeout = float(cmd.get("timeout", 60))

    def wait():
        began = time.time()
        router.request_messages_from_propagation_node(identity)
        while time.time() - began < timeout:
            state = router.propagation_transfer_state
            if state == LXMF.LXMRouter.PR_COMPLETE or state >= LXMF.LXMRouter.PR_NO_PATH:
                break
            time.sleep(0.1)
        emit("synced", ref=ref, state=router.propagation_transfer_state, complete=router.propagation_transfer_state == LXMF.LXMRouter.PR_COMPLETE,
             messages=router.propagation_transfer_last_result, ms=round((time.time() - began) * 1000))
        router.acknowledge_sync_completion()

    threading.Thread(target=wait, daemon=True).start()


def rnode_interface():
    for interface in RNS.Transport.interfaces:
        if type(interface).__name__ == "RNodeInterface":
            return interface
    return None


def main():
    args = parse_args()
    config_dir = os.path.join(args.dir, "reticulum")
    storage_dir = os.path.join(args.dir, "lxmf")
    write_config(args, config_dir)

    # Opening the RNode happens inside this constructor (detect, configure, read back), ~4 s.
    reticulum = RNS.Reticulum(configdir=config_dir, loglevel=args.loglevel)
    interface = rnode_interface()
    deadline = time.time() + args.online_timeout
    while interface is not None and not interface.online and time.time() < deadline:
        time.sleep(0.1)
    if interface is None or not interface.online:
        emit("error", error="rnode_offline", message=f"the RNode interface at tcp://{args.rnode_host}:7633 did not come online within {args.online_timeout} s (see stderr)")
        os._exit(3)

    identity = load_identity(args.identity)
    if args.propagation_cost is not None:
        router = LXMF.LXMRouter(identity=identity, storagepath=storage_dir, propagation_cost=args.propagation_cost)
        router.enable_propagation()
    else:
        router = LXMF.LXMRouter(identity=identity, storagepath=storage_dir)
    source = router.register_delivery_identity(identity, display_name=args.display_name)
    router.register_delivery_callback(on_message)
    RNS.Transport.register_announce_handler(LxmfAnnounces())
    tracker = DeliveryTracker()

    emit("ready", address=source.hash.hex(), identity_hash=identity.hash.hex(), display_name=args.display_name,
         rnode={"host": args.rnode_host, "online": bool(interface.online), "bitrate": interface.bitrate,
                "frequency": interface.r_frequency, "bandwidth": interface.r_bandwidth, "sf": interface.r_sf,
                "cr": interface.r_cr, "txpower": interface.r_txpower},
         rns_version=RNS.__version__, lxmf_version=LXMF.__version__,
         propagation_address=router.propagation_destination.hash.hex() if args.propagation_cost is not None else None)

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except ValueError as e:
            emit("error", error="bad_command", message=f"not JSON: {e}")
            continue
        name = cmd.get("cmd") if isinstance(cmd, dict) else None
        try:
            if name == "announce":
                router.announce(source.hash)
                emit("announced", address=source.hash.hex(), ref=cmd.get("ref"))
            elif name == "send":
                send(router, source, tracker, cmd)
            elif name == "request_path":
                request_path(cmd)
            elif name == "teardown_links":
                # Closes every Reticulum link this peer has (its own and those opened to it), as
                # a peer going out of range and coming back would find them gone.
                links = list(RNS.Transport.active_links) + list(RNS.Transport.pending_links)
                for link in links:
                    link.teardown()
                emit("links_closed", ref=cmd.get("ref"), count=len(links))
            elif name == "set_propagation_node":
                router.set_outbound_propagation_node(bytes.fromhex(cmd.get("to", "")))
                emit("propagation_node_set", ref=cmd.get("ref"), to=cmd.get("to"))
            elif name == "sync":
                sync(router, identity, cmd)
            elif name == "quit":
                break
            else:
                emit("error", error="bad_command", ref=cmd.get("ref") if isinstance(cmd, dict) else None, message=f"unknown command {name!r}")
        except Exception as e:  # a failed command is reported; the peer keeps running
            emit("error", error="exception", ref=cmd.get("ref"), message=f"{type(e).__name__}: {e}")

    # stdin closed or quit: let RNS detach the interface (radio off, CMD_LEAVE), then leave
    # without waiting on LXMF's and RNS's other exit handlers.
    try:
        interface.detach()
    except Exception:
        pass
    emit("bye")
    os._exit(0)


if __name__ == "__main__":
    main()
