import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DeviceError } from '../device-error.ts';
import type { TakTlsMaterial } from './transport.ts';
import type { TakSettings } from './settings.ts';

// The client certificate, its key and the CA of a tls:// TAK interface, read from the files its
// settings name at each connect (a renewed certificate is taken at the next reconnect). The key
// and passphrase go to the TLS stack only: never into a state, a log line or an error.

export interface CertificateFacts {
  subject: string;
  /** ISO time the client certificate stops being valid. */
  not_after: string;
}

export async function readTlsMaterial(s: TakSettings): Promise<{ material: TakTlsMaterial; certificate: CertificateFacts }> {
  if (s.cert_file === null || s.key_file === null) {
    throw new DeviceError('ERR_TAK_TLS_FILES', 'tls:// needs cert_file and key_file in the interface\'s settings (the client certificate a TAK server issues)', { retryable: false });
  }
  const cert = await read(s.cert_file, 'cert_file');
  const key = await read(s.key_file, 'key_file');
  const ca = s.ca_file === null ? undefined : await read(s.ca_file, 'ca_file');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new DeviceError('ERR_TAK_TLS_FILES', `cert_file ${s.cert_file} holds no PEM certificate: ${(error as Error).message}`, { retryable: false });
  }
  const passphrase = s.key_passphrase === null || s.key_passphrase === '<redacted>' ? undefined : s.key_passphrase;
  return { material: { cert, key, ca, passphrase }, certificate: { subject: x509.subject.replace(/\n/g, ', '), not_after: new Date(x509.validTo).toISOString() } };
}

async function read(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new DeviceError('ERR_TAK_TLS_FILES', `cannot read ${what} ${path}: ${code ?? (error as Error).message}`, { retryable: false, facts: { port: path, systemError: code } });
  }
}
