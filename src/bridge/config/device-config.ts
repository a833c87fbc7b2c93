import type { DeviceSection } from '../../bearers/bearer.ts';
import type { DeviceConfigSource } from '../engine/bearer-host.ts';
import type { ConfigService } from './service.ts';
import { isModuleName, type ChangeTarget } from './sections.ts';

// The bridge side of the device-configuration channel (docs/architecture.md, "Device
// configuration"): drivers read the bridge-wide radio, owner and modules sections as the
// configuration service decided them (null while never written), hear each committed change, and report what the device
// holds. A change of one module is a change of the `modules` section as a whole.

export function deviceConfigSource(config: ConfigService): DeviceConfigSource {
  return {
    desired: (section) => (config.isStored(section) ? (config.section(section) as Record<string, unknown>) : null),
    subscribe(listener) {
      const onChange = (target: ChangeTarget) => {
        const section: DeviceSection | null = target === 'radio' || target === 'owner' ? target : isModuleName(target) ? 'modules' : null;
        if (section) listener(section, config.section(section) as Record<string, unknown>, section === 'modules' ? target : undefined);
      };
      config.on('change', onChange);
      return () => config.off('change', onChange);
    },
    // One device per section is assumed (the mesh radio); the interface id is for logs to come.
    report: (_interfaceId, section, values) => config.setReported(section, values),
  };
}
