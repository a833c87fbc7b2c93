// The hub uplink's settings in force, as UplinkService.effective() decides them from the `hub`
// configuration section and the SERVICE_HUB_* environment.

export interface UplinkConfig {
  mqtt_url: string;
  /** hub.tenant; unused once enrolled (the hub names the tenant). */
  tenant: string;
  /** The bridge's own id; unused once enrolled (the hub names the bridge). */
  bridge_id: string;
  /** A one-time enrollment token (fbe_...) to trade for credentials (docs/hub.md, "Enrollment"). */
  enrollment_token?: string | null;
  username?: string | null;
  password?: string | null;
}
