// The Meshtastic stream-API codec in one import: framing (stream.ts), the protobuf messages
// (proto.ts engine; mesh, node, radio, telemetry, channel, config, module-config, admin),
// enum tables and node ids. See docs/protocols/meshtastic.md.

export * from './admin.ts';
export * from './channel.ts';
export * from './config.ts';
export * from './enums.ts';
export * from './mesh.ts';
export * from './module-config.ts';
export * from './node-id.ts';
export * from './node.ts';
export * from './presets.ts';
export * from './proto.ts';
export * from './radio.ts';
export * from './stream.ts';
export * from './telemetry.ts';
