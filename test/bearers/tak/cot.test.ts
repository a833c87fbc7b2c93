import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CoTParser } from '@tak-ps/node-cot';
import { COT, encodeChat, encodePosition, readEvent } from '../../../src/bearers/tak/cot.ts';
import { MAX_EVENT_BYTES, TakStreamDecoder } from '../../../src/bearers/tak/framing.ts';
import { readXml, XML_LIMITS } from '../../../src/bearers/tak/xml.ts';
import { ATAK_CHAT_ALL, ATAK_PLI, SERVER_PONG } from './fixtures.ts';

// The CoT codec: hand-written events an ATAK client sends are read as intended; what we write is
// exactly the XML the definitions give, and @tak-ps/node-cot (an independent reader) reads it
// back with the same uid, type, times, point, contact, group and track; hostile XML is refused.

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

test('parse: an ATAK position report', () => {
  assert.equal(readEvent(ATAK_PLI), {
    type: 'position', uid: 'ANDROID-5f2c9a7e1b3d4c60', cotType: 'a-f-G-U-C', callsign: 'RESCUE-7', lat: 47.3769, lon: 8.5417, hae: 452.3,
    timeMs: T0, staleMs: T0 + 360_000,
  });
});

test('parse: an ATAK GeoChat message to All Chat Rooms, references resolved', () => {
  assert.equal(readEvent(ATAK_CHAT_ALL), {
    type: 'chat', uid: 'GeoChat.ANDROID-5f2c9a7e1b3d4c60.All Chat Rooms.9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091', senderUid: 'ANDROID-5f2c9a7e1b3d4c60',
    senderCallsign: 'RESCUE-7', roomId: 'All Chat Rooms', roomName: 'All Chat Rooms', messageId: '9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091',
    text: 'Team 2 at the hut, need water \u{1F4A7}', timeMs: T0 + 60_000,
  });
});

test('parse: a server pong is well-formed and of no use', () => {
  assert.equal(readEvent(SERVER_PONG), { type: 'other', uid: 'takPong', cotType: 't-x-c-t-r' });
});

const position = {
  uid: 'fieldbridge.meshtastic-!a1b2c3d4', type: 'a-f-G-U-C', how: 'm-g', timeMs: T0, staleMs: T0 + 1_800_000, lat: 47.1234567, lon: -122.5, hae: 12,
  callsign: 'Trail "crew" <1>', group: { name: 'Cyan', role: 'Team Member' }, track: { course: 90, speed: 1.5 }, remarks: 'battery 80%; via mesh',
};

test('generate: a position event is the XML of the definitions, character for character', () => {
  assert.is(encodePosition(position),
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
    '<event version="2.0" uid="fieldbridge.meshtastic-!a1b2c3d4" type="a-f-G-U-C" how="m-g" time="2026-03-01T10:00:00.000Z" start="2026-03-01T10:00:00.000Z" stale="2026-03-01T10:30:00.000Z">' +
    '<point lat="47.1234567" lon="-122.5" hae="12" ce="9999999" le="9999999"/>' +
    '<detail><contact callsign="Trail &quot;crew&quot; &lt;1&gt;"/><__group name="Cyan" role="Team Member"/><track course="90" speed="1.5"/><remarks>battery 80%; via mesh</remarks></detail></event>');
});

test('round trip: a position event reads back', () => {
  assert.equal(readEvent(encodePosition(position)), {
    type: 'position', uid: position.uid, cotType: 'a-f-G-U-C', callsign: position.callsign, lat: position.lat, lon: position.lon, hae: 12, timeMs: T0, staleMs: T0 + 1_800_000,
  });
});

test('node-cot reads our position event as intended: type, uid, time/stale, point, contact, group, track, remarks', async () => {
  const cot = CoTParser.from_xml(encodePosition(position));
  const a = cot.raw.event._attributes;
  assert.equal([a.uid, a.type, a.how, a.time, a.start, a.stale], [position.uid, 'a-f-G-U-C', 'm-g', '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z', '2026-03-01T10:30:00.000Z']);
  const f = await CoTParser.to_geojson(cot);
  assert.equal(f.geometry, { type: 'Point', coordinates: [-122.5, 47.1234567, 12] });
  assert.is(f.properties.callsign, position.callsign);
  assert.equal(f.properties.group, { name: 'Cyan', role: 'Team Member' });
  assert.is(f.properties.course, 90);
  assert.is(f.properties.speed, 1.5);
  assert.is(f.properties.remarks, 'battery 80%; via mesh');
});

const chat = {
  senderUid: 'fieldbridge.meshtastic-!a1b2c3d4', senderCallsign: 'Trail crew', roomId: COT.allChatRooms, roomName: COT.allChatRooms, messageId: 'd-1',
  timeMs: T0, staleMs: T0 + 86_400_000, text: 'at the hut & <dry>',
};

test('generate and round trip: a GeoChat message to All Chat Rooms', () => {
  const xml = encodeChat(chat);
  assert.ok(xml.includes('uid="GeoChat.fieldbridge.meshtastic-!a1b2c3d4.All Chat Rooms.d-1" type="b-t-f" how="h-g-i-g-o"'), xml);
  assert.ok(xml.includes('<chatgrp uid0="fieldbridge.meshtastic-!a1b2c3d4" uid1="All Chat Rooms" id="All Chat Rooms"/>'), xml);
  assert.not.ok(xml.includes('<marti>'), 'a message to everyone names no destination');
  const r = readEvent(xml);
  assert.equal(r, { type: 'chat', uid: 'GeoChat.fieldbridge.meshtastic-!a1b2c3d4.All Chat Rooms.d-1', senderUid: chat.senderUid, senderCallsign: 'Trail crew', roomId: 'All Chat Rooms', roomName: 'All Chat Rooms', messageId: 'd-1', text: chat.text, timeMs: T0 });
});

test('node-cot reads our GeoChat as a chat with its sender, room and text; a direct one names its destination', async () => {
  const cot = CoTParser.from_xml(encodeChat(chat));
  assert.ok(cot.is_chat(), 'node-cot takes it for chat');
  const d = cot.raw.event.detail as Record<string, any>;
  assert.is(d.__chat._attributes.senderCallsign, 'Trail crew');
  assert.is(d.__chat._attributes.chatroom, 'All Chat Rooms');
  assert.is(d.__chat.chatgrp._attributes.uid0, chat.senderUid);
  assert.is(d.remarks._text, 'at the hut & <dry>');
  const direct = CoTParser.from_xml(encodeChat({ ...chat, roomId: 'ANDROID-5f2c9a7e1b3d4c60', roomName: 'ANDROID-5f2c9a7e1b3d4c60' }));
  assert.equal(direct.raw.event.detail?.marti, { dest: { _attributes: { uid: 'ANDROID-5f2c9a7e1b3d4c60' } } } as never);
});

test('hostile XML is refused without expanding anything: DOCTYPE, entities, depth, size, attributes', () => {
  const laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><event>&lol2;</event>';
  const bad = [
    laughs,
    '<event uid="a" type="b" time="x" stale="y">&xxe;</event>',
    '<!DOCTYPE event SYSTEM "file:///etc/passwd"><event/>',
    '<?xml-stylesheet href="x"?><event/>',
    `${'<a>'.repeat(XML_LIMITS.depth + 1)}${'</a>'.repeat(XML_LIMITS.depth + 1)}`,
    `<event>${'x'.repeat(XML_LIMITS.chars)}</event>`,
    `<event ${Array.from({ length: XML_LIMITS.attributes + 1 }, (_, i) => `a${i}="1"`).join(' ')}/>`,
    '<event a="1" a="2"/>',
    '<event a="<"/>',
    '<event>&#0;</event>',
    '<event>&#xD800;</event>',
    '<event>a & b</event>',
    '<event></evnt>',
    '<event/><event/>',
  ];
  for (const xml of bad) assert.not.ok(readXml(xml).ok, xml.slice(0, 60));
  assert.is(readEvent(laughs).type, 'invalid');
  assert.equal(readXml('<a b=\'&quot;&apos;&#65;&#x42;\'><![CDATA[<raw> & ]]><!-- c --></a>'), { ok: true, root: { name: 'a', attrs: Object.assign(Object.create(null), { b: '"\'AB' }), children: [], text: '<raw> & ' } });
});

const stream = Buffer.from(`${ATAK_PLI}\n${ATAK_CHAT_ALL}\r\n${SERVER_PONG}`, 'utf8');
const expected = [ATAK_PLI, ATAK_CHAT_ALL, SERVER_PONG];

test('chunking: events back to back, the stream split at every byte offset, give the same events', () => {
  for (let cut = 0; cut <= stream.length; cut++) {
    const d = new TakStreamDecoder();
    const got = [...d.push(stream.subarray(0, cut)).events, ...d.push(stream.subarray(cut)).events];
    assert.equal(got, expected, `split at ${cut}`);
  }
  const d = new TakStreamDecoder();
  const bytes: string[] = [];
  for (const b of stream) bytes.push(...d.push(Uint8Array.of(b)).events);
  assert.equal(bytes, expected, 'one byte at a time');
});

test('framing: an event that never ends is dropped at the bound and the next one is read', () => {
  const d = new TakStreamDecoder();
  const r1 = d.push(Buffer.from(`<event uid="x">${'y'.repeat(MAX_EVENT_BYTES + 10)}`));
  assert.equal(r1.events, []);
  assert.ok(r1.oversized > MAX_EVENT_BYTES, 'the bytes are counted');
  assert.ok(d.pending <= MAX_EVENT_BYTES);
  const r2 = d.push(Buffer.from(`</event>${SERVER_PONG}`));
  assert.equal(r2.events.slice(-1), [SERVER_PONG]);
});

test.run();
