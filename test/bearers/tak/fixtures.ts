// CoT events written by hand from the definitions in docs/protocols/tak.md (2.1-2.6): what an
// ATAK client sends for its own position and for a GeoChat message, not our encoder's output.

/** An ATAK client's position report (2.1-2.4): its uid, a friendly ground unit, GPS, a point
 *  with hae and ce, callsign, team and role, track. */
export const ATAK_PLI =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
  '<event version="2.0" uid="ANDROID-5f2c9a7e1b3d4c60" type="a-f-G-U-C" how="m-g" time="2026-03-01T10:00:00.000Z" start="2026-03-01T10:00:00.000Z" stale="2026-03-01T10:06:00.000Z">' +
  '<point lat="47.3769" lon="8.5417" hae="452.3" ce="9.9" le="9999999.0"/>' +
  '<detail><contact callsign="RESCUE-7" endpoint="*:-1:stcp"/><__group name="Red" role="Team Lead"/>' +
  '<track course="271.5" speed="1.2"/><remarks>&lt;on foot&gt; &amp; ready</remarks></detail></event>';

/** The same client's GeoChat message to All Chat Rooms (2.5). */
export const ATAK_CHAT_ALL =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<event version="2.0" uid="GeoChat.ANDROID-5f2c9a7e1b3d4c60.All Chat Rooms.9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091" type="b-t-f" how="h-g-i-g-o" time="2026-03-01T10:01:00.000Z" start="2026-03-01T10:01:00.000Z" stale="2026-03-02T10:01:00.000Z">\n' +
  '  <point lat="47.3769" lon="8.5417" hae="452.3" ce="9999999.0" le="9999999.0"/>\n' +
  '  <detail>\n' +
  '    <__chat parent="RootContactGroup" groupOwner="false" messageId="9d1f7c2a-3b4e-4f60-8a71-2c5d6e7f8091" chatroom="All Chat Rooms" id="All Chat Rooms" senderCallsign="RESCUE-7">\n' +
  '      <chatgrp uid0="ANDROID-5f2c9a7e1b3d4c60" uid1="All Chat Rooms" id="All Chat Rooms"/>\n' +
  '    </__chat>\n' +
  '    <link uid="ANDROID-5f2c9a7e1b3d4c60" type="a-f-G-U-C" relation="p-p"/>\n' +
  '    <remarks source="BAO.F.ATAK.ANDROID-5f2c9a7e1b3d4c60" to="All Chat Rooms" time="2026-03-01T10:01:00.000Z">Team 2 at the hut, need water &#x1F4A7;</remarks>\n' +
  '  </detail>\n' +
  '</event>';

/** A TAK server's answer to a client's ping (2.7): well-formed, of no use to the bridge. */
export const SERVER_PONG =
  '<event version="2.0" uid="takPong" type="t-x-c-t-r" how="h-g-i-g-o" time="2026-03-01T10:02:00Z" start="2026-03-01T10:02:00Z" stale="2026-03-01T10:02:20Z"><point lat="0.0" lon="0.0" hae="0.0" ce="9999999.0" le="9999999.0"/><detail/></event>';
