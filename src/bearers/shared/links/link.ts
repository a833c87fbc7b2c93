// A Link is an open byte stream to a device, whatever carries it (a serial port, a TCP socket
// to a WiFi board, BLE's Nordic UART service). Drivers speak their protocol over a Link and
// never know which; openLink (open-link.ts) turns a port value into a Link.

export type LinkKind = 'serial' | 'tcp' | 'ble';

export interface Link {
  readonly kind: LinkKind;
  /** Human-readable origin: "/dev/ttyUSB0", "tcp://10.0.0.5:7633". Never secret. */
  readonly description: string;
  write(data: Uint8Array): Promise<void>;
  onData(listener: (chunk: Uint8Array) => void): void;
  /** Called once when the link goes away, with the reason (unplugged, reset by peer...). */
  onClose(listener: (reason: string) => void): void;
  close(): Promise<void>;
}
