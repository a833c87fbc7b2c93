// The MeshCore companion-radio codec: framing (frame.ts), commands (commands.ts), responses
// and pushes (responses.ts), flood scopes (scope.ts), one constants table (constants.ts). Pure
// (docs/style.md habit 1).
export * from './constants.ts';
export * from './frame.ts';
export * from './commands.ts';
export * from './responses.ts';
export { hex, sameBytes, utf8 } from './bytes.ts';
export * from './scope.ts';
