// The parts of @liamcottle/meshcore.js (MIT; a dev dependency, used only by these tests as
// the independent client) that the tests call. The package ships no types.
declare module '@liamcottle/meshcore.js' {
  type Handler = (data: any) => void;
  export class Connection {
    on(event: string | number, handler: Handler): void;
    off(event: string | number, handler: Handler): void;
    once(event: string | number, handler: Handler): void;
    connect(): Promise<void>;
    close(): void | Promise<void>;
    getSelfInfo(timeoutMillis?: number | null): Promise<any>;
    deviceQuery(appTargetVer: number): Promise<any>;
    syncDeviceTime(): Promise<void>;
    setDeviceTime(epochSecs: number): Promise<void>;
    getContacts(): Promise<any[]>;
    getChannel(index: number): Promise<any>;
    getChannels(): Promise<any[]>;
    sendTextMessage(publicKey: Uint8Array, text: string, type?: number): Promise<{ result: number; expectedAckCrc: number; estTimeout: number }>;
    sendChannelTextMessage(channelIdx: number, text: string): Promise<void>;
    syncNextMessage(): Promise<any>;
    getWaitingMessages(): Promise<any[]>;
    resetPath(publicKey: Uint8Array): Promise<void>;
    sendFloodAdvert(): Promise<void>;
    setFloodScope(transportKey: Uint8Array | number[]): Promise<void>;
    clearFloodScope(): Promise<void>;
  }
  export class TransportKeyUtil {
    static getHashtagRegionKey(regionName: string): Promise<Uint8Array>;
  }
  export class TCPConnection extends Connection {
    constructor(host: string, port: number);
  }
  export class NodeJSSerialConnection extends Connection {
    constructor(path: string);
  }
  export const Constants: {
    ResponseCodes: Record<string, number>;
    PushCodes: Record<string, number>;
    ErrorCodes: Record<string, number>;
    TxtTypes: Record<string, number>;
  };
}
