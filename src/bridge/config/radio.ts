import type { RadioValues } from './sections.ts';

// docs/api.md 4.4: radio settings that differ from the rest of the network can make the device
// invisible to its mesh. Nodes hear each other only with the same region, modem preset and
// frequency slot; hop limit and TX power change reach, not visibility, so they never warn.
// The baseline is what the mesh radio last reported (the mesh driver calls
// ConfigService.setReportedRadio). With no report yet, a change of those fields is accepted
// with a warning that it could not be checked, rather than silently.

export const MESH_IDENTITY_FIELDS = ['region', 'modem_preset', 'channel_num'] as const;

export interface RadioWarning {
  code: 'RADIO_DIFFERS_FROM_MESH' | 'RADIO_NOT_REPORTED';
  fields: string[];
  message: string;
}

export function radioWarnings(next: RadioValues, before: RadioValues, reported: Partial<RadioValues> | null): RadioWarning[] {
  if (reported) {
    const differs = MESH_IDENTITY_FIELDS.filter((f) => reported[f] !== undefined && reported[f] !== next[f]);
    if (differs.length === 0) return [];
    const detail = differs.map((f) => `${f} ${String(next[f])} (the mesh radio reports ${String(reported[f])})`).join(', ');
    return [{
      code: 'RADIO_DIFFERS_FROM_MESH',
      fields: [...differs],
      message: `accepted, but ${detail}: nodes using the reported values will not hear this device, so it may become invisible to its mesh`,
    }];
  }
  const changed = MESH_IDENTITY_FIELDS.filter((f) => before[f] !== next[f]);
  if (changed.length === 0) return [];
  return [{
    code: 'RADIO_NOT_REPORTED',
    fields: [...changed],
    message: `accepted, but the mesh radio has not reported its settings yet, so the new ${changed.join(', ')} could not be compared with the mesh; if they differ from the other nodes, this device may become invisible to its mesh`,
  }];
}
