import { isAbsolute } from 'node:path';
import { isIPv4 } from 'node:net';
import { z } from 'zod';
import { ATOM_TYPE, COT, ROLES, TEAMS } from './cot.ts';

// Settings of a `tak` interface (docs/tak.md, "Settings").

// The marker a read shows for a stored secret (bridge/interfaces/secrets.ts); spelled out here:
// bearers/ imports nothing from bridge/.
const REDACTED = '<redacted>';
const int = (what: string, min: number, max: number) =>
  z.number({ error: `${what} must be a whole number` }).int({ error: `${what} must be a whole number` })
    .min(min, { error: `${what} must be ${min} to ${max}` }).max(max, { error: `${what} must be ${min} to ${max}` });
const file = (what: string, description: string) =>
  z.string().refine((v) => isAbsolute(v), { error: `${what} must be an absolute path` }).nullable().default(null).describe(description);
const atomType = z.string().regex(ATOM_TYPE, 'a CoT type for a position is a MIL-STD-2525 atom such as a-f-G-U-C (friendly ground unit)');

export const REMARK_PARTS = ['battery', 'last_heard', 'via', 'node_id'] as const;

/** Largest GeoChat text sent (characters of the message). */
export const TAK_DEFAULT_MTU = 4096;

export const TakSettings = z
  .strictObject({
    callsign: z.string().min(1).max(64).default('fieldbridge')
      .describe('The callsign of the bridge itself: the sender of chat the API sends (a message heard on a mesh is sent under its node\'s name)'),
    uid_prefix: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'uid_prefix must be 1 to 32 letters, digits, "_" or "-"').default('fieldbridge')
      .describe('Every uid this interface writes starts with it and a dot; events heard with such a uid are its own, echoed back, and are not routed'),
    cot_type: atomType.default(COT.type.friendlyGroundCombat)
      .describe('CoT type of a node\'s marker (MIL-STD-2525 as CoT writes it): a-f-G-U-C is a friendly ground unit'),
    node_types: z.record(z.string().min(1).max(64), atomType).refine((r) => Object.keys(r).length <= 256, { error: 'node_types may name at most 256 nodes' }).default({})
      .describe('CoT type per node, by node id or by name (a vehicle\'s tracker as a-f-G-E-V), overriding cot_type'),
    team: z.enum(TEAMS).default('Cyan').describe('TAK team (colour) of the markers'),
    role: z.enum(ROLES).default('Team Member').describe('TAK role of the markers'),
    stale_s: int('stale_s', 30, 604_800).default(1800)
      .describe('A marker goes stale this many seconds after its fix was taken (not after it was sent): an old fix arrives already stale'),
    min_interval_s: int('min_interval_s', 0, 86_400).default(30)
      .describe('At most one position per node this often; a newer one meanwhile replaces the waiting one (latest only), and is sent when the interval is over'),
    remarks: z.array(z.enum(REMARK_PARTS)).max(REMARK_PARTS.length).default(['battery', 'last_heard', 'via'])
      .describe('What a marker\'s remarks say: battery, last_heard, via (the interface it was heard on), node_id'),
    chat_room: z.string().min(1).max(128).default(COT.allChatRooms)
      .describe('Where a text to broadcast (^all) goes; any other destination is a TAK user\'s uid (a direct message)'),
    positions_in: z.boolean().default(true)
      .describe('Positions of TAK users heard on this interface are kept in the node database (network tak)'),
    cert_file: file('cert_file', 'tls://: PEM file of the client certificate the TAK server issued'),
    key_file: file('key_file', 'tls://: PEM file of the client certificate\'s private key (never shown: only its path is a setting)'),
    ca_file: file('ca_file', 'tls://: PEM file of the CA that signed the TAK server\'s certificate (the truststore); null: the system\'s authorities'),
    key_passphrase: z.union([z.string().min(1).max(256), z.literal(REDACTED)]).nullable().default(null)
      .describe('Passphrase of an encrypted key_file. A secret: shown and exported as "<redacted>", never logged'),
    multicast_interface: z.string().refine((v) => isIPv4(v), { error: 'multicast_interface must be an IPv4 address' }).nullable().default(null)
      .describe('udp:// multicast: the local IPv4 address of the network interface to join the group on; null: the system\'s choice'),
    multicast_ttl: int('multicast_ttl', 1, 255).default(1).describe('udp:// multicast: hops a datagram may take (1: this network only)'),
    mtu: int('mtu', 1, 65_536).default(TAK_DEFAULT_MTU).describe('Largest chat text sent, in bytes'),
  })
  .superRefine((s, ctx) => {
    if ((s.cert_file === null) !== (s.key_file === null)) ctx.addIssue({ code: 'custom', path: [s.cert_file === null ? 'cert_file' : 'key_file'], message: 'cert_file and key_file are given together' });
  })
  .describe('Settings of a TAK interface');
export type TakSettings = z.infer<typeof TakSettings>;

export const TAK_SECRET_SETTINGS = ['key_passphrase'] as const;
