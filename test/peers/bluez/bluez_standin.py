#!/usr/bin/python3
"""A stand-in for BlueZ (bluetoothd) on a private D-Bus bus, for fieldbridge's BLE tests.

No Bluetooth adapter exists where the tests run, so this exports the org.bluez objects that
bluetoothd exports, following BlueZ's D-Bus API documentation (doc/org.bluez.Adapter.rst,
Device.rst, GattService.rst, GattCharacteristic.rst) and, where the documentation says
nothing, what bluetoothd's code does (src/device.c, src/gatt-client.c). It uses Debian's
python3-dbus and python3-gi, so it shares no code with the Node D-Bus client it tests.

Behaviour taken from BlueZ (and what fieldbridge's docs/ports.md "BLE decisions" cites):
 - ObjectManager on "/"; InterfacesAdded / InterfacesRemoved from "/".
 - Device1.Connect() on LE replies once the link is up, *before* service discovery ends
   (att_connect_cb in device.c). Connected=true is announced first, then the GATT objects
   (InterfacesAdded, only the first time: they stay cached for a bonded device across
   disconnects), then ServicesResolved=true.
 - A disconnect sends the Device1.Disconnected(reason, message) signal, then one
   PropertiesChanged with ServicesResolved=false and Connected=false.
 - GattCharacteristic1.MTU exists only while connected.
 - Each notification sets Value and sends its own PropertiesChanged on "Value" (flushed);
   so does a successful ReadValue.
 - WriteValue: "command" needs the write-without-response flag and at most MTU-3 bytes;
   "request" while another request on that characteristic is under way is InProgress;
   anything while disconnected is Failed "Not connected".
 - StartNotify: one session per D-Bus sender; a second call answers success.

Each GATT device is backed by a simulator served by the test over TCP ("relay"): the Nordic
UART profile relays RX writes to it and its bytes back as TX notifications of at most MTU-3
bytes; the Meshtastic profile turns each ToRadio write into a stream frame (94 C3 len) for
the simulator, and the frames it answers into FromRadio reads, notifying FromNum (a
little-endian uint32 counter) as the firmware does (src/nimble/NimbleBluetooth.cpp): a read
during the config phase waits for data, afterwards an empty read means "nothing more".

The test drives it with JSON lines on stdin (see COMMANDS) and reads "ready" on stdout.
"""

import json
import socket
import struct
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BUS_NAME = 'org.bluez'
OM = 'org.freedesktop.DBus.ObjectManager'
PROPS = 'org.freedesktop.DBus.Properties'
ADAPTER = 'org.bluez.Adapter1'
DEVICE = 'org.bluez.Device1'
SERVICE = 'org.bluez.GattService1'
CHAR = 'org.bluez.GattCharacteristic1'
DESC = 'org.bluez.GattDescriptor1'
CCCD = '00002902-0000-1000-8000-00805f9b34fb'

NUS = {
    'service': '6e400001-b5a3-f393-e0a9-e50e24dcca9e',
    'chars': [
        ('rx', '6e400002-b5a3-f393-e0a9-e50e24dcca9e', ['write-without-response', 'write']),
        ('tx', '6e400003-b5a3-f393-e0a9-e50e24dcca9e', ['notify']),
    ],
}
MESHTASTIC = {
    'service': '6ba1b218-15a8-461f-9fa8-5dcae273eafd',
    'chars': [
        ('toradio', 'f75c76d2-129e-4dad-a1dd-7866124401e7', ['write']),
        ('fromradio', '2c55e69e-4993-11ed-b878-0242ac120002', ['read']),
        ('fromnum', 'ed9da18c-a800-4f66-a670-aa7547e34453', ['notify', 'read']),
        ('logradio', '5a3d6e49-06e6-4423-9944-e9de8cdf9547', ['notify', 'read']),
    ],
}
# A MeshCore companion radio offers Nordic UART too; only what travels in it differs.
PROFILES = {'nus': NUS, 'meshtastic': MESHTASTIC, 'meshcore': NUS}
GENERIC_ACCESS = '00001800-0000-1000-8000-00805f9b34fb'


def error(name, message):
    e = dbus.DBusException(message)
    e._dbus_error_name = 'org.bluez.Error.' + name
    return e


class Obj(dbus.service.Object):
    """An exported object with BlueZ-style properties: {iface: {name: dbus value}}."""

    def __init__(self, bus, path):
        self.path = path
        self.props = {}
        dbus.service.Object.__init__(self, bus, path)

    def managed(self):
        return dbus.Dictionary({i: dbus.Dictionary(p, signature='sv') for i, p in self.props.items()}, signature='sa{sv}')

    def set(self, iface, changed, removed=()):
        """Changes properties and announces them in one PropertiesChanged, as BlueZ batches."""
        self.props[iface].update(changed)
        for name in removed:
            self.props[iface].pop(name, None)
        self.PropertiesChanged(iface, dbus.Dictionary(changed, signature='sv'), dbus.Array(removed, signature='s'))

    @dbus.service.method(PROPS, in_signature='ss', out_signature='v')
    def Get(self, iface, name):
        if iface not in self.props or name not in self.props[iface]:
            raise error('InvalidArguments', 'No such property ' + name) if iface in self.props else dbus.DBusException(
                'No such interface', name='org.freedesktop.DBus.Error.InvalidArgs')
        return self.props[iface][name]

    @dbus.service.method(PROPS, in_signature='s', out_signature='a{sv}')
    def GetAll(self, iface):
        return dbus.Dictionary(self.props.get(iface, {}), signature='sv')

    @dbus.service.method(PROPS, in_signature='ssv')
    def Set(self, iface, name, value):
        if iface == DEVICE and name in ('Trusted', 'Alias', 'Blocked'):
            self.set(iface, {name: value})
            return
        raise dbus.DBusException('Property is read-only', name='org.freedesktop.DBus.Error.PropertyReadOnly')

    @dbus.service.signal(PROPS, signature='sa{sv}as')
    def PropertiesChanged(self, iface, changed, invalidated):
        pass


class Root(dbus.service.Object):
    def __init__(self, bluez):
        self.bluez = bluez
        dbus.service.Object.__init__(self, bluez.bus, '/')

    @dbus.service.method(OM, out_signature='a{oa{sa{sv}}}')
    def GetManagedObjects(self):
        return dbus.Dictionary({o.path: o.managed() for o in self.bluez.objects()}, signature='oa{sa{sv}}')

    @dbus.service.signal(OM, signature='oa{sa{sv}}')
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OM, signature='oas')
    def InterfacesRemoved(self, path, interfaces):
        pass


class Adapter(Obj):
    def __init__(self, bluez, spec):
        Obj.__init__(self, bluez.bus, '/org/bluez/' + spec['name'])
        self.props[ADAPTER] = {
            'Address': dbus.String(spec['address']), 'AddressType': dbus.String('public'),
            'Name': dbus.String(spec.get('alias', 'fieldbridge-pi')), 'Alias': dbus.String(spec.get('alias', 'fieldbridge-pi')),
            'Class': dbus.UInt32(0x6c0000), 'Powered': dbus.Boolean(spec.get('powered', True)),
            'Discoverable': dbus.Boolean(False), 'Pairable': dbus.Boolean(True),
            'Discovering': dbus.Boolean(False), 'UUIDs': dbus.Array([], signature='s'),
            'Roles': dbus.Array(['central', 'peripheral'], signature='s'),
        }


class Characteristic(Obj):
    def __init__(self, device, service_path, handle, role, uuid, flags):
        Obj.__init__(self, device.bluez.bus, '%s/char%04x' % (service_path, handle))
        self.device = device
        self.role = role
        self.flags = flags
        self.notify_senders = set()
        self.writing = False
        props = {
            'UUID': dbus.String(uuid), 'Service': dbus.ObjectPath(service_path),
            'Value': dbus.Array([], signature='y'), 'Flags': dbus.Array(flags, signature='s'),
            'Handle': dbus.UInt16(handle + 1),
        }
        if 'notify' in flags or 'indicate' in flags:
            props['Notifying'] = dbus.Boolean(False)
            props['NotifyAcquired'] = dbus.Boolean(False)
        if 'write-without-response' in flags:
            props['WriteAcquired'] = dbus.Boolean(False)
        if device.connected:
            props['MTU'] = dbus.UInt16(device.mtu)
        self.props[CHAR] = props
        self.descriptors = []
        if 'notify' in flags:
            self.descriptors.append(Descriptor(self, handle + 2))

    def value_changed(self, data):
        """A notification or a completed read: Value is set and announced at once."""
        self.set(CHAR, {'Value': dbus.Array(bytearray(data), signature='y')})

    def notify(self, data):
        if self.device.connected and self.notify_senders:
            self.value_changed(data)

    @dbus.service.method(CHAR, in_signature='a{sv}', out_signature='ay', async_callbacks=('reply', 'fail'))
    def ReadValue(self, options, reply, fail):
        if not self.device.connected:
            return fail(error('Failed', 'Not connected'))
        if 'read' not in self.flags:
            return fail(error('NotPermitted', 'Read not permitted'))

        def done(data):
            self.value_changed(data)
            reply(dbus.Array(bytearray(data), signature='y'))

        self.device.profile.read(self, done, fail)

    @dbus.service.method(CHAR, in_signature='aya{sv}', async_callbacks=('reply', 'fail'))
    def WriteValue(self, value, options, reply, fail):
        if not self.device.connected:
            return fail(error('Failed', 'Not connected'))
        data = bytes(bytearray(value))
        kind = str(options.get('type', 'command' if 'write' not in self.flags else 'request'))
        if kind == 'command':
            if 'write-without-response' not in self.flags:
                return fail(error('NotSupported', 'Operation is not supported'))
            if len(data) > self.device.mtu - 3:
                self.device.bluez.log('refused a Write Command of %d bytes (MTU %d)' % (len(data), self.device.mtu))
                return fail(error('Failed', 'Failed to initiate write'))
            self.device.bluez.count('write-command', len(data))
            self.device.profile.write(self, data)
            return reply()
        if kind not in ('request', 'reliable') or 'write' not in self.flags:
            return fail(error('NotSupported', 'Operation is not supported'))
        if self.writing:
            return fail(error('InProgress', 'In Progress'))
        self.writing = True
        self.device.bluez.count('write-request', len(data))

        def complete():
            self.writing = False
            if not self.device.connected:
                fail(error('Failed', 'Not connected'))
                return False
            self.device.profile.write(self, data)
            reply()
            return False

        GLib.timeout_add(2, complete)  # a write request waits for the board's Write Response

    @dbus.service.method(CHAR, in_signature='', out_signature='', sender_keyword='sender')
    def StartNotify(self, sender=None):
        if 'notify' not in self.flags and 'indicate' not in self.flags:
            raise error('NotSupported', 'Operation is not supported')
        if sender in self.notify_senders:
            return  # "Each client can only have one active notify session": a repeat succeeds
        self.notify_senders.add(sender)
        self.device.bluez.watch_sender(sender, self)
        # gatt-client.c: while disconnected the session is kept and registered once the GATT
        # client is ready again; Notifying turns true when it is registered.
        if self.device.connected:
            self.set(CHAR, {'Notifying': dbus.Boolean(True)})

    def reconnected(self):
        if self.notify_senders and not self.props[CHAR].get('Notifying'):
            self.set(CHAR, {'Notifying': dbus.Boolean(True)})

    @dbus.service.method(CHAR, in_signature='', out_signature='', sender_keyword='sender')
    def StopNotify(self, sender=None):
        if sender not in self.notify_senders:
            raise error('Failed', 'No notify session started')
        self.drop_session(sender)

    def drop_session(self, sender):
        self.notify_senders.discard(sender)
        if not self.notify_senders and self.props[CHAR].get('Notifying'):
            self.set(CHAR, {'Notifying': dbus.Boolean(False)})


class Descriptor(Obj):
    def __init__(self, char, handle):
        Obj.__init__(self, char.device.bluez.bus, '%s/desc%04x' % (char.path, handle))
        self.props[DESC] = {
            'UUID': dbus.String(CCCD), 'Characteristic': dbus.ObjectPath(char.path),
            'Value': dbus.Array([], signature='y'), 'Flags': dbus.Array([], signature='s'), 'Handle': dbus.UInt16(handle),
        }


class Service(Obj):
    def __init__(self, device, handle, uuid):
        Obj.__init__(self, device.bluez.bus, '%s/service%04x' % (device.path, handle))
        self.props[SERVICE] = {
            'UUID': dbus.String(uuid), 'Device': dbus.ObjectPath(device.path), 'Primary': dbus.Boolean(True),
            'Includes': dbus.Array([], signature='o'), 'Handle': dbus.UInt16(handle),
        }


class NusProfile:
    """Nordic UART: RX written, TX notified with what the simulator says."""

    def __init__(self, device):
        self.device = device

    def write(self, char, data):
        if char.role == 'rx':
            self.device.relay_send(data)

    def read(self, char, done, fail):
        done(b'')

    def from_relay(self, data):
        tx = self.device.char('tx')
        size = self.device.mtu - 3
        for at in range(0, len(data), size):
            tx.notify(data[at:at + size])

    def reset(self):
        pass


def top_fields(payload):
    """The field numbers at the top level of a protobuf message (enough to follow the phase)."""
    fields, at = [], 0
    try:
        while at < len(payload):
            key, at = varint(payload, at)
            number, wire = key >> 3, key & 7
            fields.append(number)
            if wire == 0:
                _, at = varint(payload, at)
            elif wire == 1:
                at += 8
            elif wire == 2:
                length, at = varint(payload, at)
                at += length
            elif wire == 5:
                at += 4
            else:
                break
    except IndexError:
        pass
    return fields


def varint(data, at):
    value, shift = 0, 0
    while True:
        b = data[at]
        at += 1
        value |= (b & 0x7f) << shift
        shift += 7
        if b < 0x80:
            return value, at


class MeshtasticProfile:
    """ToRadio -> stream frame to the simulator; its frames -> FromRadio reads + FromNum."""
    TORADIO_WANT_CONFIG_ID = 3  # mesh.proto ToRadio.want_config_id
    FROMRADIO_CONFIG_COMPLETE_ID = 7  # mesh.proto FromRadio.config_complete_id

    def __init__(self, device):
        self.device = device
        self.reset()

    def reset(self):
        self.queue = []
        self.buffer = b''
        self.waiting = []
        self.config_phase = False
        self.from_num = 0
        self.last_to_radio = None

    def write(self, char, data):
        if char.role != 'toradio' or not data:
            return
        # NimbleBluetooth.cpp drops a ToRadio identical to the previous one.
        if data == self.last_to_radio:
            self.device.bluez.count('duplicate-toradio', len(data))
            return
        self.last_to_radio = data
        if self.TORADIO_WANT_CONFIG_ID in top_fields(data):
            self.config_phase = True
        self.device.relay_send(bytes([0x94, 0xC3, len(data) >> 8, len(data) & 0xFF]) + data)

    def read(self, char, done, fail):
        if char.role == 'fromnum':
            return done(struct.pack('<I', self.from_num))
        if char.role != 'fromradio':
            return done(b'')
        if self.queue:
            return done(self.pop())
        if not self.config_phase:
            return done(b'')  # STATE_SEND_PACKETS: empty means nothing more
        # During config the firmware holds the read until it has a packet (about 20 s at most).
        entry = [done, None]
        entry[1] = GLib.timeout_add(20000, self.give_up, entry)
        self.waiting.append(entry)

    def give_up(self, entry):
        if entry in self.waiting:
            self.waiting.remove(entry)
            entry[0](b'')
        return False

    def pop(self):
        payload = self.queue.pop(0)
        if self.FROMRADIO_CONFIG_COMPLETE_ID in top_fields(payload):
            self.config_phase = False
        return payload

    def from_relay(self, data):
        self.buffer += data
        while True:
            start = self.buffer.find(b'\x94\xc3')
            if start < 0:
                self.buffer = self.buffer[-1:] if self.buffer.endswith(b'\x94') else b''
                return
            self.buffer = self.buffer[start:]
            if len(self.buffer) < 4:
                return
            length = (self.buffer[2] << 8) | self.buffer[3]
            if length > 512:
                self.buffer = self.buffer[1:]
                continue
            if len(self.buffer) < 4 + length:
                return
            payload, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
            self.queue.append(payload)
            if self.waiting:
                done, timer = self.waiting.pop(0)
                GLib.source_remove(timer)
                done(self.pop())
            elif not self.config_phase:
                self.from_num += 1
                self.device.char('fromnum').notify(struct.pack('<I', self.from_num))


class MeshCoreProfile:
    """MeshCore companion over Nordic UART: one frame per RX write and per TX notification,
    without the serial '<'/'>' header (firmware SerialBLEInterface). The simulator behind the
    relay speaks the serial framing, so headers are added to writes and taken off its frames."""
    MAX_FRAME_SIZE = 176  # BaseSerialInterface.h

    def __init__(self, device):
        self.device = device
        self.reset()

    def reset(self):
        self.buffer = b''

    def write(self, char, data):
        # SerialBLEInterface ignores an empty write and one longer than MAX_FRAME_SIZE.
        if char.role != 'rx' or not data or len(data) > self.MAX_FRAME_SIZE:
            self.device.bluez.count('ignored-write', len(data))
            return
        self.device.relay_send(b'<' + struct.pack('<H', len(data)) + data)

    def read(self, char, done, fail):
        done(b'')

    def from_relay(self, data):
        self.buffer += data
        while True:
            start = self.buffer.find(b'>')
            if start < 0:
                self.buffer = b''
                return
            self.buffer = self.buffer[start:]
            if len(self.buffer) < 3:
                return
            length = struct.unpack('<H', self.buffer[1:3])[0]
            if length == 0 or length > self.MAX_FRAME_SIZE:
                self.buffer = self.buffer[1:]
                continue
            if len(self.buffer) < 3 + length:
                return
            frame, self.buffer = self.buffer[3:3 + length], self.buffer[3 + length:]
            # A notification carries at most MTU - 3 bytes: a longer frame arrives cut.
            size = self.device.mtu - 3
            if len(frame) > size:
                self.device.bluez.count('cut-notification', len(frame))
            self.device.char('tx').notify(frame[:size])


class Device(Obj):
    def __init__(self, bluez, adapter_path, spec):
        address = spec['address'].upper()
        Obj.__init__(self, bluez.bus, '%s/dev_%s' % (adapter_path, address.replace(':', '_')))
        self.bluez = bluez
        self.spec = spec
        self.mtu = int(spec.get('mtu', 23))
        self.connected = False
        self.connecting = False
        self.relay = None
        self.services = []
        self.chars = {}
        self.profile = None
        profile = PROFILES.get(spec.get('profile'))
        uuids = [GENERIC_ACCESS]
        if profile:
            uuids.append(profile['service'])
            self.profile = {'nus': NusProfile, 'meshtastic': MeshtasticProfile, 'meshcore': MeshCoreProfile}[spec['profile']](self)
        props = {
            'Address': dbus.String(address), 'AddressType': dbus.String(spec.get('address_type', 'public')),
            'Alias': dbus.String(spec.get('alias', spec.get('name', address.replace(':', '-')))),
            'Paired': dbus.Boolean(spec.get('paired', True)), 'Bonded': dbus.Boolean(spec.get('bonded', True)),
            'Trusted': dbus.Boolean(spec.get('trusted', True)), 'Blocked': dbus.Boolean(False),
            'LegacyPairing': dbus.Boolean(False), 'CablePairing': dbus.Boolean(False),
            'Connected': dbus.Boolean(False), 'ServicesResolved': dbus.Boolean(False),
            'Adapter': dbus.ObjectPath(adapter_path), 'UUIDs': dbus.Array(uuids, signature='s'),
            'WakeAllowed': dbus.Boolean(False),
        }
        if 'name' in spec:
            props['Name'] = dbus.String(spec['name'])
        if spec.get('old_bluez'):
            del props['Bonded']  # BlueZ before 5.67 had no Bonded property
        self.props[DEVICE] = props

    def char(self, role):
        return self.chars[role]

    def gatt_objects(self):
        out = []
        for service in self.services:
            out.append(service)
            for char in self.chars.values():
                if char.props[CHAR]['Service'] == service.path:
                    out.append(char)
                    out.extend(char.descriptors)
        return out

    def build_gatt(self):
        profile = PROFILES.get(self.spec.get('profile'))
        if not profile or self.services:
            return
        service = Service(self, 0x0028, profile['service'])
        self.services.append(service)
        handle = 0x0029
        for role, uuid, flags in profile['chars']:
            self.chars[role] = Characteristic(self, service.path, handle, role, uuid, flags)
            handle += 3
        for obj in self.gatt_objects():
            self.bluez.root.InterfacesAdded(obj.path, obj.managed())

    @dbus.service.method(DEVICE, async_callbacks=('reply', 'fail'))
    def Connect(self, reply, fail):
        adapter = self.bluez.adapter_of(self)
        if adapter is None or not adapter.props[ADAPTER]['Powered']:
            return fail(error('Failed', 'le-connection-adapter-not-powered'))
        if self.connected:
            return reply()
        if self.connecting:
            return fail(error('InProgress', 'In Progress'))
        self.connecting = True

        def attempt():
            self.connecting = False
            try:
                host, port = self.spec['relay'].rsplit(':', 1)
                sock = socket.create_connection((host, int(port)), timeout=2)
            except (OSError, KeyError, ValueError) as e:
                self.bluez.log('connect %s failed: %s' % (self.spec['address'], e))
                fail(error('Failed', 'le-connection-abort-by-local'))
                return False
            sock.setblocking(False)
            self.relay = sock
            self.relay_watch = GLib.io_add_watch(sock.fileno(), GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, self.on_relay)
            if self.profile:
                self.profile.reset()
            self.connected = True
            self.set(DEVICE, {'Connected': dbus.Boolean(True)})
            for char in self.chars.values():
                char.set(CHAR, {'MTU': dbus.UInt16(self.mtu)})
            reply()  # att_connect_cb: the reply comes before service discovery
            GLib.timeout_add(30, self.resolved)
            return False

        GLib.timeout_add(5, attempt)

    def resolved(self):
        if not self.connected:
            return False
        self.build_gatt()
        for char in self.chars.values():
            char.reconnected()
        self.set(DEVICE, {'ServicesResolved': dbus.Boolean(True)})
        return False

    @dbus.service.method(DEVICE)
    def Disconnect(self):
        if not self.connected:
            raise error('NotConnected', 'Not Connected')
        self.drop('org.bluez.Reason.Local', 'Connection terminated by local host')

    @dbus.service.method(DEVICE)
    def Pair(self):
        raise error('AuthenticationCanceled', 'Authentication Canceled (no agent in this stand-in)')

    @dbus.service.signal(DEVICE, signature='ss')
    def Disconnected(self, reason, message):
        pass

    def relay_send(self, data):
        if self.relay:
            try:
                self.relay.sendall(data)
            except OSError:
                pass

    def on_relay(self, fd, condition):
        data = b''
        if condition & GLib.IO_IN:
            try:
                data = self.relay.recv(65536)
            except OSError:
                data = b''
        if not data:
            self.relay_watch = None
            self.drop('org.bluez.Reason.Timeout', 'Connection timeout')
            return False
        if self.profile:
            self.profile.from_relay(data)
        return True

    def drop(self, reason, message):
        if not self.connected:
            return
        self.connected = False
        if self.relay:
            if getattr(self, 'relay_watch', None):
                GLib.source_remove(self.relay_watch)
            self.relay.close()
            self.relay = None
        self.Disconnected(reason, message)
        for char in self.chars.values():
            # Notifying stays as it was: gatt-client.c clears the registrations (clear_notify_id)
            # without announcing it, and registers the sessions again on the next connection.
            char.set(CHAR, {}, ['MTU'])
        self.set(DEVICE, {'ServicesResolved': dbus.Boolean(False), 'Connected': dbus.Boolean(False)})


class Bluez:
    def __init__(self, bus, config):
        self.bus = bus
        self.config = config
        self.root = Root(self)
        self.agent_manager = Obj(bus, '/org/bluez')
        self.agent_manager.props = {'org.bluez.AgentManager1': {}, 'org.bluez.ProfileManager1': {}}
        self.adapters = {}
        self.devices = {}
        self.counters = {}
        self.watched = {}
        for spec in config.get('adapters', []):
            self.add_adapter(spec)

    def log(self, text):
        sys.stderr.write('bluez-standin: %s\n' % text)
        sys.stderr.flush()

    def count(self, what, size):
        entry = self.counters.setdefault(what, {'count': 0, 'max': 0})
        entry['count'] += 1
        entry['max'] = max(entry['max'], size)

    def objects(self):
        out = [self.agent_manager]
        for adapter in self.adapters.values():
            out.append(adapter)
        for device in self.devices.values():
            out.append(device)
            out.extend(device.gatt_objects())
        return out

    def adapter_of(self, device):
        for adapter in self.adapters.values():
            if device.path.startswith(adapter.path + '/'):
                return adapter
        return None

    def add_adapter(self, spec):
        adapter = Adapter(self, spec)
        self.adapters[spec['name']] = adapter
        self.root.InterfacesAdded(adapter.path, adapter.managed())
        for dspec in self.config.get('devices', []):
            if dspec.get('adapter', 'hci0') == spec['name']:
                self.add_device(adapter, dspec)

    def add_device(self, adapter, spec):
        device = Device(self, adapter.path, spec)
        self.devices[spec['address'].upper()] = device
        self.root.InterfacesAdded(device.path, device.managed())

    def remove_adapter(self, name):
        """An unplugged adapter: its devices' objects go first, then the adapter's."""
        adapter = self.adapters.pop(name)
        for address, device in list(self.devices.items()):
            if device.path.startswith(adapter.path + '/'):
                device.connected = False
                if device.relay:
                    device.relay.close()
                    device.relay = None
                for obj in reversed(device.gatt_objects()):
                    self.root.InterfacesRemoved(obj.path, list(obj.props.keys()))
                    obj.remove_from_connection()
                self.root.InterfacesRemoved(device.path, list(device.props.keys()) + [PROPS])
                device.remove_from_connection()
                del self.devices[address]
        self.root.InterfacesRemoved(adapter.path, list(adapter.props.keys()))
        adapter.remove_from_connection()

    def watch_sender(self, sender, char):
        """BlueZ ends a client's notify sessions when it leaves the bus."""
        def gone(new_owner):
            if new_owner == '':
                for device in self.devices.values():
                    for c in device.chars.values():
                        if sender in c.notify_senders:
                            c.drop_session(sender)
        if sender not in self.watched:
            self.watched[sender] = self.bus.watch_name_owner(sender, gone)

    def command(self, cmd):
        what = cmd['cmd']
        device = self.devices.get(cmd.get('device', '').upper())
        if what == 'set':
            device.set(DEVICE, {cmd['prop']: dbus.Boolean(cmd['value']) if isinstance(cmd['value'], bool) else cmd['value']})
        elif what == 'drop':
            device.drop(cmd.get('reason', 'org.bluez.Reason.Remote'), cmd.get('message', 'Connection terminated by remote user'))
        elif what == 'remove_adapter':
            self.remove_adapter(cmd['adapter'])
        elif what == 'add_adapter':
            self.add_adapter(cmd['spec'])
        elif what == 'power':
            self.adapters[cmd['adapter']].set(ADAPTER, {'Powered': dbus.Boolean(cmd['value'])})
        elif what == 'counters':
            pass
        else:
            raise ValueError('unknown command ' + what)
        return {'ok': True, 'counters': self.counters}


def main():
    config = json.load(open(sys.argv[1]))
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(config['bus'])
    bluez = Bluez(bus, config)
    bluez.name = dbus.service.BusName(BUS_NAME, bus, do_not_queue=True)  # kept: a dropped BusName releases the name
    loop = GLib.MainLoop()

    def on_stdin(fd, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        try:
            answer = bluez.command(json.loads(line))
        except Exception as e:  # the test hears about its own mistakes
            answer = {'ok': False, 'error': repr(e)}
        sys.stdout.write(json.dumps(answer) + '\n')
        sys.stdout.flush()
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    loop.run()


if __name__ == '__main__':
    main()
